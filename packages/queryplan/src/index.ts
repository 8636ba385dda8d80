export * from './diagnostics.js';
export * from './types.js';
export * from './arith.js';
export * from './ir.js';
export * from './print.js';
export * from './dot.js';
export * from './validate.js';
export * from './interpret.js';
