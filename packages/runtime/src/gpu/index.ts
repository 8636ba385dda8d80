/**
 * The device layer for code that drives kernels itself (the operator bench, the device's own tests): the engine's
 * API is the package's index.
 */
export { DeviceFault } from './device-fault.js';
export { internals, openDevice, type Gpu, type GpuLimits, type GpuOptions } from './device.js';
export { openGpu } from './dawn.js';
export { deviceMemoryUsed, gpuClockMHz } from './device-memory.js';
export { chunkRows, fitsOneChunk } from './chunks.js';
export { DeviceLimitError, downloadRelation, downloadRelations, exactRows, releaseRelation, settle, uploadRelation, uploadRelationStaged, type DeviceRelation } from './relations.js';
export { loadStoreOnDevice } from './store-columns.js';
export { replayBytes } from './replay.js';
export { runKernel } from './kernels/run-kernel.js';
export { sortRows, type SortPath } from './kernels/sort.js';
export { limitOnDevice, type TopKPath } from './limit.js';
export { byteSorter, DeviceByteStringSort } from './string-sort.js';
export { buildHashTable, hashGroupBy, hashJoin, HASH_GROUPS, probeHashTable, releaseHashTable, type HashTable, type KeyedRelation } from './hash.js';
export { defaultUploadPlan, uploadBytes, uploadWords, type UploadFill, type UploadMethod, type UploadPlan } from './upload.js';
