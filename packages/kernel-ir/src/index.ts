export * from './ir.js';
