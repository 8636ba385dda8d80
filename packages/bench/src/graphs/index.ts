export { Rng } from './prng.js';
export { distinctEdgesInWorkers, edgeRows, edgeWeight, edgeWeights, weightedEdgeRows, filterEdges, symmetric, symmetricInWorkers, MAX_NODES, type EdgeFilter, type Graph } from './graph.js';
export { binaryTree, chain, cycle, grid, rmat, rmatInWorkers, RMAT_PART_EDGES, uniformRandom, type RmatOptions, type UniformOptions } from './generators.js';
export { andersenFacts, cspaFacts, type AndersenFacts, type AndersenOptions, type CspaFacts, type CspaOptions } from './points-to.js';
export { loadSnapEdges, writeEdgeTsv } from './snap.js';
export {
  benchGraphs,
  formatGraphBenchReport,
  makeGraph,
  GRAPH_KINDS,
  GRAPH_WORKLOADS,
  LOOP_DEFAULTS,
  type GraphBenchOptions,
  type GraphBenchReport,
  type GraphBenchResult,
  type GraphSpec,
  type GraphWorkload,
} from './bench.js';
export { componentsOnHost, distancesOnHost } from './host-answers.js';
