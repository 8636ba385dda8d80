export { openGpu, type Gpu, type GpuLimits, type GpuOptions } from './device.js';
export { BindingSizeError, downloadRelation, releaseRelation, uploadRelation, type DeviceRelation } from './relations.js';
export { runKernel } from './kernels.js';
