export { openGpu, type Gpu, type GpuLimits, type GpuOptions } from './device.js';
export { DeviceLimitError, downloadRelation, downloadRelations, exactRows, releaseRelation, uploadRelation, type DeviceRelation } from './relations.js';
export { runKernel } from './kernels.js';
export { buildHashTable, hashGroupBy, hashJoin, HASH_GROUPS, probeHashTable, releaseHashTable, type HashTable, type KeyedRelation } from './hash.js';
