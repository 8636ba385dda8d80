// Multi-GPU feasibility probe (measure only; scripts/device/multi-gpu.sh runs it on a two-GPU machine): which adapters
// Dawn lists, which physical GPU a process lands on, and host<->device copy throughput per process.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { create, globals } = require(process.env.DAWN_NODE); // the bundle's dawn.node
Object.assign(globalThis, globals);
const mode = process.argv[2];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

async function open(flags = []) {
  const gpu = create(flags);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance', featureLevel: process.env.DAWNNODE_BACKEND ? 'compatibility' : 'core' });
  const l = adapter.limits;
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: l.maxBufferSize, maxStorageBufferBindingSize: l.maxStorageBufferBindingSize } });
  return { gpu, adapter, device };
}
const info = (a) => JSON.stringify({ vendor: a.info.vendor, device: a.info.device, description: a.info.description, arch: a.info.architecture });

async function hold(device, gib) {
  const bufs = [];
  for (let i = 0; i < gib; i++) {
    const b = device.createBuffer({ size: 1 << 30, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const e = device.createCommandEncoder(); e.clearBuffer(b); device.queue.submit([e.finish()]);
    bufs.push(b);
  }
  await device.queue.onSubmittedWorkDone();
  return bufs;
}

async function copies(device, mib) {
  const size = mib << 20; const host = new Uint8Array(size); for (let i = 0; i < size; i += 4096) host[i] = i & 255;
  const dst = device.createBuffer({ size, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC | GPUBufferUsage.STORAGE });
  const rb = device.createBuffer({ size, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  device.queue.writeBuffer(dst, 0, host); await device.queue.onSubmittedWorkDone();
  let t = now(); device.queue.writeBuffer(dst, 0, host); await device.queue.onSubmittedWorkDone(); const up = now() - t;
  t = now(); const e = device.createCommandEncoder(); e.copyBufferToBuffer(dst, 0, rb, 0, size); device.queue.submit([e.finish()]);
  await rb.mapAsync(GPUMapMode.READ); const out = new Uint8Array(rb.getMappedRange()).slice(); rb.unmap(); const down = now() - t;
  return { upGBs: size / up / 1e6, downGBs: size / down / 1e6, ok: out[4096] === host[4096] };
}

// dawn.node's pending promises do not keep Node's event loop alive; a timer does until process.exit.
setInterval(() => {}, 1000);
if (mode === 'list') {
  try { console.log('resolved', await create(['adapter=__no_such_adapter__']).requestAdapter({ featureLevel: process.env.DAWNNODE_BACKEND ? 'compatibility' : 'core' })); } catch (e) { console.log(String(e.message ?? e)); }
} else if (mode === 'hold') {
  const { adapter, device } = await open();
  await hold(device, Number(process.argv[3] ?? 4));
  console.log(`pid ${process.pid} env ${process.env.PROBE_ENV ?? '-'} adapter ${info(adapter)} holding`);
  await sleep(4000);
} else if (mode === 'two-instances') {
  // Two Dawn instances in one process, the second after changing the environment: same GPU or not?
  const a = await open(); await hold(a.device, 3);
  if (process.env.SECOND_ENV) { const [k, v] = process.env.SECOND_ENV.split('='); process.env[k] = v; }
  const b = await open(); await hold(b.device, 7);
  console.log(`two instances: A ${info(a.adapter)} holds 3 GiB, B ${info(b.adapter)} holds 7 GiB`);
  await sleep(4000);
} else if (mode === 'copies') {
  const { device } = await open();
  // 256 MiB: a 1 GiB readback aborted inside Dawn on the H200 (std::system_error).
  for (const mib of [256]) { const c = await copies(device, mib); console.log(`pid ${process.pid} env ${process.env.PROBE_ENV ?? '-'}: ${mib} MiB upload ${c.upGBs.toFixed(1)} GB/s, readback ${c.downGBs.toFixed(1)} GB/s (ok ${c.ok})`); }
}
process.exit(0);
