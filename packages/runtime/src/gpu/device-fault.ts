/**
 * Device faults as user errors: out of memory, device loss and errors Dawn reports become a VixenError saying
 * what the run was doing (the kernel and the relation it computed, the sizes), never Dawn's own text, which is
 * kept in `detail` for debugging (`VIXEN_DEBUG=1`, `--verbose`).
 */
import { VixenError } from '@vixen/queryplan';
import { formatBytes as size } from '../limits.js';

export type DeviceFaultKind = 'out-of-memory' | 'validation' | 'internal' | 'lost';

export class DeviceFault extends VixenError {
  constructor(
    readonly kind: DeviceFaultKind,
    message: string,
    /** What the device said, for debugging; never part of the message. */
    readonly detail: string,
  ) {
    super({ severity: 'error', message });
    this.name = 'DeviceFault';
  }

  /**
   * The device runs nothing more (lost, or an internal error): a new one is needed. After running out of memory or
   * a validation error it goes on (gpu/device.ts `fail`).
   */
  get failsDevice(): boolean {
    return this.kind === 'lost' || this.kind === 'internal';
  }
}

/** A buffer the device refused to create: its size and what the run was doing when it asked. */
export interface AllocationFailure {
  bytes: number;
  /** GpuImpl.activity when the buffer was asked for. */
  activity: string;
  /** 'out-of-memory' (the device ran out) or 'validation' (the size is past the device's buffer limit). */
  kind: 'out-of-memory' | 'validation';
  detail: string;
}

const HINT = 'a smaller --max-device-memory (API: maxDeviceMemory) makes the run spill to host memory sooner';

/** The fault of a run whose buffer could not be created. */
export function allocationFault(f: AllocationFailure, heldBytes: number, maxBufferSize: number): DeviceFault {
  const what = f.activity || 'the run';
  const held = heldBytes > 0 ? ` while the run held ${size(heldBytes)} of relations` : '';
  return f.kind === 'out-of-memory'
    ? new DeviceFault('out-of-memory', `out of device memory: ${what} needed a buffer of ${size(f.bytes)}${held}; ${HINT}`, f.detail)
    : new DeviceFault(
        'out-of-memory',
        `${what} needed a buffer of ${size(f.bytes)}, more than the device's largest buffer, ${size(maxBufferSize)}`,
        f.detail,
      );
}

/** The fault for a device error of `kind` that no allocation explains, found while `activity` ran (or before). */
export function deviceErrorFault(kind: Exclude<DeviceFaultKind, 'lost'>, activity: string, detail: string): DeviceFault {
  const at = activity ? ` at or before ${activity}` : '';
  if (kind === 'out-of-memory') return new DeviceFault(kind, `out of device memory${at}; ${HINT}`, detail);
  return new DeviceFault(
    kind,
    `the device refused the run's work${at} (a GPU ${kind} error: a bug in Vixen; VIXEN_DEBUG=1 shows the device's message)`,
    detail,
  );
}

/** The fault of a lost device. */
export function lostFault(reason: string, activity: string, detail: string): DeviceFault {
  const at = activity ? ` while running ${activity}` : '';
  const why = reason === 'destroyed' ? 'was closed' : 'was lost (the driver reset it or ran out of memory)';
  return new DeviceFault('lost', `the GPU device ${why}${at}; its relations are gone, and a new device is needed for the next run`, detail);
}
