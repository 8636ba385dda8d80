/**
 * The contract between generated WGSL and the host drivers: which passes exist and what each binds.
 * Every pass module has one entry point `main`, an `override WG: u32` workgroup size, and binds
 * group 0 bindings 0.. in the order listed here. The uniform binding is `array<vec4<u32>, N>`:
 * vec4 0 holds sizes (meaning per pass), vec4s 1.. hold the kernel's constant words (kernelConstants order).
 */

/** `read`: read-only storage, `write`: read-write storage, `uniform`: sizes + constants (dynamic offset). */
export type BindingKind = 'read' | 'write' | 'uniform';

export const PASS_LAYOUTS = {
  /** In-place exclusive scan of each WG-element block; block totals to `sums`. u0 = (n). */
  scanBlock: ['write', 'write', 'uniform'],
  /** data[i] += sums[block of i]. u0 = (n). */
  scanAdd: ['write', 'read', 'uniform'],
  /** flags[i] (i < n) = keep row i; flags[n] = 0. (input, flags, u) u0 = (n). */
  flags: ['read', 'write', 'uniform'],
  /** difference flags: (left, right, flags, u) u0 = (nLeft, nRight). */
  flagsAbsent: ['read', 'read', 'write', 'uniform'],
  /** Rows i with offsets[i+1] != offsets[i] written (projected) at offsets[i]. (input, offsets, output, u) u0 = (n). */
  scatter: ['read', 'read', 'write', 'uniform'],
  /** counts[i] (i < nLeft) = matches of left row i passing the filter; counts[nLeft] = 0. (left, right, counts, u) */
  joinCount: ['read', 'read', 'write', 'uniform'],
  /** Emits left row i's matches at offsets[i]... (left, right, offsets, output, u) u0 = (nLeft, nRight). */
  joinWrite: ['read', 'read', 'read', 'write', 'uniform'],
  /** idx[i] = i. (idx, u) u0 = (n). */
  sortInit: ['write', 'uniform'],
  /** One bitonic compare-exchange step on idx. (input, idx, u) u0 = (n, j, flip). */
  sortStep: ['read', 'write', 'uniform'],
  /** output row i = input row idx[i]. (input, idx, output, u) u0 = (n). */
  gather: ['read', 'read', 'write', 'uniform'],
} as const satisfies Record<string, readonly BindingKind[]>;

export type PassName = keyof typeof PASS_LAYOUTS;
