export { Rng } from './prng.js';
export { edgeRows, filterEdges, symmetric, MAX_NODES, type EdgeFilter, type Graph } from './graph.js';
export { binaryTree, chain, cycle, grid, rmat, uniformRandom, type RmatOptions, type UniformOptions } from './generators.js';
export { andersenFacts, cspaFacts, type AndersenFacts, type AndersenOptions, type CspaFacts, type CspaOptions } from './points-to.js';
export { loadSnapEdges, writeEdgeTsv } from './snap.js';
