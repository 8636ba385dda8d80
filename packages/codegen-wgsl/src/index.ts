/** The package's public surface: shader generation for the runtime, and what its host drivers share with the WGSL. */
export { kernelConstants, kernelTables, type TableSpec } from './constants.js';
export { generateKernelShaders, generateProgramShaders, type ShaderOptions } from './generate.js';
export { PASS_LAYOUTS, TABLES_GROUP, type KernelShaders, type PassName } from './passes.js';
export { COUNT_CLAMP, SUBGROUP_VARIANT, uniformVec4s } from './wgsl.js';
export { AGG_ITEMS, aggregateStateWords } from './kernels/aggregate.js';
export { COMPACT_ITEMS, SELECT_STATE_HEAD, SELECT_UNORDERED } from './kernels/compaction.js';
export { HASH_ITEMS, JOIN_PAIRS, hashBuildShaders, hashProbeShaders, joinSlotWords, type HashKeyLayout, type JoinOutputWord } from './kernels/hash.js';
export { GROUP_ITEMS, groupRowWords, groupSlotWords, hashAggregateShaders, type HashAggregate } from './kernels/hash-aggregate.js';
export { hashJoinLayout, swapHashJoin } from './kernels/hash-join.js';
export { MERGE_TILE } from './kernels/merge.js';
export { storeColumnShaders } from './kernels/store-columns.js';
export { PARSE_SEGMENT_BYTES, deviceParses, parseInternShaders, parseStringsShaders, parseTextShaders, type TextLayout } from './kernels/parse-text.js';
export { aggregateSlotWords, groupSlotLayout, pipelineBuildLayouts, pipelineBuildPass, pipelineParamsAt } from './kernels/pipeline.js';
export { isProjection } from './kernels/project.js';
export { rangeSelectShaders } from './kernels/range-select.js';
export { RADIX_BITS, RADIX_COUNT_WORDS, RADIX_STATE_HEAD, RADIX_WINDOWS, radixItems, sortKeyWords } from './kernels/sort.js';
export { TOPK_BINS, TOPK_STATE_HEAD, topKLevels } from './kernels/top-k.js';
export { SMALL_LOOP_STATUS, smallLoopConstants, smallLoopLayout, smallLoopShaders, type SmallLoopLayout } from './kernels/small-loop.js';
