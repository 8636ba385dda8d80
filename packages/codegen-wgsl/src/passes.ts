/**
 * The contract between generated WGSL and the host drivers: which passes exist and what each binds.
 * Every pass module has one entry point `main`, an `override WG: u32` workgroup size, and binds
 * group 0 bindings 0.. in the order listed here. The uniform binding is `array<vec4<u32>, N>`:
 * vec4 0 holds sizes (meaning per pass), vec4s 1.. hold the kernel's constant words (kernelConstants order).
 */

/** `read`: read-only storage, `write`: read-write storage, `uniform`: sizes + constants (dynamic offset). */
export type BindingKind = 'read' | 'write' | 'uniform';

export const PASS_LAYOUTS = {
  /**
   * Top-k level d = state[1] (kernels/top-k.ts): counts per digit d the rows whose first d digits are the chosen
   * ones, unless state[0] (done). (input, state, hist, u) u0 = (n).
   */
  topkHist: ['read', 'read', 'write', 'uniform'],
  /** Picks level state[1]'s digit from the histogram (one thread), advances the level, zeroes the histogram. (state, hist, u) u0 = (n, 0, k). */
  topkPick: ['write', 'write', 'uniform'],
  /** Writes the rows at or below the chosen digits, at most `capacity`; their count to state[4]. (input, state, output, u) u0 = (n, capacity). */
  topkWrite: ['read', 'write', 'write', 'uniform'],
  /**
   * Top-k of a few rows in one pass (kernels/top-k.ts): row i goes to output row rank(i) where that is below the
   * room, P threads a row as rankSort's; thread 0 writes min(n, room) after the room's rows. (input, output, u)
   * u0 = (n, P, room).
   */
  topkRank: ['read', 'write', 'uniform'],
  /**
   * Top-k round r of tiles (kernels/top-k.ts): each workgroup's tile of the round's rows writes its first k at
   * output row tile * k; thread 0 writes the round's output count after `capacity` rows. (input, output, u)
   * u0 = (n of round 0, k, capacity, r).
   */
  topkTile: ['read', 'write', 'uniform'],
  /** In-place exclusive scan of each WG-element block; block totals to `sums`. u0 = (n). */
  scanBlock: ['write', 'write', 'uniform'],
  /** data[i] += sums[block of i]. u0 = (n). */
  scanAdd: ['write', 'read', 'uniform'],
  /** data[n] = 1 when the scanned data[0..n) decreases somewhere (the sum wrapped). u0 = (n). */
  scanWrapped: ['write', 'uniform'],
  /**
   * Sorted aggregation's tile pass (kernels/aggregate.ts): group starts per tile, tile states, and per thread the
   * group starts before its rows in the tile and the state open at its first row. (input, counts, u) u0 = (n, _,
   * tiles): tiles of the host's bound on n lay out counts and states (n may be a pending count); tiles without rows
   * leave their counts as they are (zeroed by the host).
   */
  flags: ['read', 'write', 'uniform'],
  /**
   * Sorted aggregation's output: one row per group at its rank (kernels/aggregate.ts). (input, offsets, output, u)
   * u0 = (n, room, tiles), as flags': no group at or past the room is written (a guessed room, which the host
   * checks); a decimal overflow sets the word after the room's rows.
   */
  scatter: ['read', 'read', 'write', 'uniform'],
  /**
   * Single-pass compaction (kernels/compaction.ts): the input rows passing the kernel's keep test, projected, at
   * output rows 0.. in input order. One workgroup per tile of COMPACT_ITEMS * WG rows; the host zeroes
   * state[0 .. SELECT_STATE_HEAD + tiles) first (tiles = ceil(n / TILE) of the host's bound on n, the grid's
   * workgroups); the pass leaves the kept-row total in state[1]. (input, state, output, u) u0 = (n, _, write):
   * write = 0 counts only (output unused).
   */
  select: ['read', 'write', 'write', 'uniform'],
  /**
   * A mapFilter without a filter (kernels/project.ts): output row i = the projection of input row i, i < n, one
   * thread each. (input, output, u) u0 = (n).
   */
  project: ['read', 'write', 'uniform'],
  /** As select, keeping left rows absent from the sorted right: (left, right, state, output, u) u0 = (nLeft, nRight, write). */
  selectAbsent: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * The matches of each left row i passing the filter (none for nLeft <= i <= slots), scanned as scanBlock does:
   * counts[i] = the exclusive sum over i's block of WG slots, totals[block] = the block's sum, for i <= slots;
   * starts[i] (i < nLeft) = the first right row with left row i's key. (left, right, counts, starts, totals, u)
   * u0 = (nLeft, nRight, slots): slots >= nLeft from the host.
   */
  joinCount: ['read', 'read', 'write', 'write', 'write', 'uniform'],
  /**
   * Emits left row i's matches at offsets[i].., from joinCount's starts: a thread per left row, or per output row
   * below min(offsets[nLeft], room) (joinWritesPerOutputRow). (left, right, offsets, starts, output, u)
   * u0 = (nLeft, nRight, _, room).
   */
  joinWrite: ['read', 'read', 'read', 'read', 'write', 'uniform'],
  /**
   * runs[0] (zeroed by the host) = the most rows of the sorted right side sharing one key (the most matches one left
   * row can have), so a join's output is bounded without reading its total back; a thread per right row.
   * (right, runs, u) u0 = (nRight).
   */
  joinRuns: ['read', 'write', 'uniform'],
  /**
   * Merge of two runs sorted by the same key words, left first among equals (kernels/merge.ts): splits[t] = the left
   * rows among the first min(t * MERGE_TILE, nLeft + nRight) output rows, t = 0 .. ceil((nLeft + nRight) /
   * MERGE_TILE). (left, right, splits, u) u0 = (nLeft, nRight).
   */
  mergeSplits: ['read', 'read', 'write', 'uniform'],
  /** The merge's output row per thread, from mergeSplits' splits. (left, right, splits, output, u) u0 = (nLeft, nRight). */
  merge: ['read', 'read', 'read', 'write', 'uniform'],
  /** data[at] = a + b, one thread: the row count of a merge whose input counts are device words. (data, u) u0 = (a, b, at). */
  countSum: ['write', 'uniform'],
  /**
   * data[at] = min(a, b), one thread: the row count of an output sized by a guess, from the device's total (a) and
   * the rows it has room for (b), so later passes never read past its rows (the guess is checked at the next sync).
   * (data, u) u0 = (a, b, at).
   */
  countClamp: ['write', 'uniform'],
  /**
   * Rows of one part appended to an output on the device (kernels/concat.ts), a thread per word: output words
   * [at * w, (at + n) * w) = input words [0, n * w), and output[countAt] = at + n, the count after it. n and at may be
   * pending counts (at: the output's count word, which the part before wrote). (input, output, u) u0 = (n, at, w, countAt).
   */
  appendRows: ['read', 'write', 'uniform'],
  /**
   * Sort of a few rows by counting (kernels/sort.ts): input row i goes to output row rank(i), the rows before it
   * in the sort's order (smaller keys, or equal keys and a smaller index: stable). P threads per row (WG / P rows a
   * workgroup, P a power of two up to 32 dividing WG), n^2 key comparisons in one pass. (input, output, u) u0 = (n, P).
   */
  rankSort: ['read', 'write', 'uniform'],
  /**
   * Each workgroup's tile of SORT_TILE_ITEMS * WG input rows sorted (stably) into the same output rows, by a merge
   * sort in workgroup memory (kernels/sort.ts): the sorted runs mergeRanks starts from. (input, output, u) u0 = (n).
   */
  sortTiles: ['read', 'write', 'uniform'],
  /**
   * One pass of the merge sort of few rows (kernels/sort.ts): sorted runs of L rows of src, each MERGE_RANK_FAN of
   * them merged into one run of dst (stable), a thread per row. (src, dst, u) u0 = (n, L).
   */
  mergeRanks: ['read', 'write', 'uniform'],
  /**
   * Radix sort's counts (kernels/sort.ts): for key words k = k0.. k0 + RADIX_COUNT_WORDS - 1 (those there are),
   * mask[k] |= key word k of each row XOR that of row 0, and hist[(k * RADIX_WINDOWS + w) * 256 + d] += the rows
   * whose key word k has digit d at shift 8w (mask and hist zeroed by the host; the runtime binds both in one buffer,
   * the mask after the counts, where the digit passes read it). Block b = tiles
   * [b * per, (b + 1) * per) of TILE = radixItems(width) * WG rows, one workgroup each.
   * (input, mask, hist, u) u0 = (n, k0, blocks, per), u1 = (row words, key words kc counted from k0), u2 = the row
   * offsets of those kc (at most RADIX_COUNT_WORDS) key words.
   */
  radixCount: ['read', 'write', 'write', 'uniform'],
  /**
   * pairs[2i] = word `off` of row pairs[2i+1] (the next key word, through the permutation so far).
   * (input, pairs, u) u0 = (n, off, row words).
   */
  radixKeys: ['read', 'write', 'uniform'],
  /**
   * One digit pass of the radix sort: a stable scatter of the pairs by their key digit at `shift`, one tile of
   * TILE = radixItems(width) * WG pairs per workgroup, the tiles numbered by state[u0.w] (zeroed by the host with the
   * tile statuses after it: a sort's passes may each have their own state in one buffer) and each tile's offsets
   * found by a look-back over the statuses of the tiles before it.
   * The key word is word u1.x (0 or 1) of each pair, or, when u1.y = 1, word u1.z of each input row (`src` is the
   * input, the index is the row's); hist from word `counts` on holds the window's global digit counts (radixCount's).
   * u1.w = 1 + the word of hist holding the key word's varying bits (radixCount's mask), or 0 where the host planned
   * varying windows only: a window without any is a copy.
   * u0.x = n, or 0xffffffff where n is in hist after the K mask words (a pending count copied there once per sort).
   * (src, hist, state, dst, u) u0 = (n, shift, counts, state offset), u1 = (kp, fromRows, off, mask), u2 = (row words,
   * the word of hist holding a pending n).
   */
  radixSweep: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * For a CPU adapter, before each radixSweep: tile t's status of digit d = AGGREGATE | its items of digit d (the
   * key as radixSweep reads it). (src, state, u) u0, u1, u2 as radixSweep.
   */
  radixTiles: ['read', 'write', 'uniform'],
  /** Then every tile's statuses made PREFIX | the inclusive prefix, one thread per digit. (hist, state, u) u0 as radixSweep. */
  radixTilePrefix: ['read', 'write', 'uniform'],
  /** As radixSweep, writing input row (pair's index) instead of the pair. (src, hist, input, state, dst, u) u0, u1, u2 as radixSweep. */
  radixSweepRows: ['read', 'read', 'read', 'write', 'write', 'uniform'],
  /** As radixSweep for one-word rows, sorted as bare keys (tiles of radixItems(1) * WG keys). (src, hist, state, dst, u) u0, u1 as radixSweep. */
  radixSweepKeys: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * Hash table build (kernels/hash.ts): build row i goes into the linear-probing table of mask + 1 slots of
   * 1 + K words (head row + 1, then the key words; 0 = empty); an equal key already there makes row i the
   * new head of that key's chain (next[i] = the old head + 1, 0 ends a chain) and sets the word after the
   * slots (duplicates). The host zeroes the table. (build, table, next, u) u0 = (n, mask, first row). A filtered build (a
   * pipeline probe's build filter) runs twice, u0 = (n, mask, phase): phase 0 counts the kept rows into the word
   * after the duplicates word, phase 1 inserts them into the first slots, as many as keptMask gives for them.
   */
  hashBuild: ['read', 'write', 'write', 'uniform'],
  /**
   * Hashed unique (kernels/unique.ts): row i claims a slot of the linear-probing table of mask + 1 slots (row + 1;
   * 0 = empty) unless an equal row holds one; dup[i] = 1 then, else 0. The host zeroes the table; a selectAbsent
   * pass then keeps the rows with dup[i] = 0. (input, table, dup, u) u0 = (n, mask).
   */
  uniqueInsert: ['read', 'write', 'write', 'uniform'],
  /**
   * Probe of the table: for tile t of TILE = HASH_ITEMS * WG probe rows, one output row per (probe row, build
   * row) with equal keys, at counter[0] (atomically advanced by the tile's matches) onwards; rows at or past
   * `capacity` are counted, not written; a thread whose chains pass the override CHAIN_STEPS writes nothing and
   * sets CHAIN_OVERFLOW in counter[0]. (probe, build, table, next, output, counter, u) u0 = (n, mask, capacity).
   */
  hashProbe: ['read', 'read', 'read', 'read', 'write', 'write', 'uniform'],
  /**
   * Fused pipeline probe (kernels/pipeline.ts), a workgroup per tile of HASH_ITEMS * WG input rows: rows passing
   * the filter are looked up in every probe's table and each combination of matches writes one output row, at
   * counter[0] (advanced atomically by the tile's total) onwards; rows at or past `capacity` are counted, not
   * written. `hashed` holds per probe its join table (as hashBuild's, with the word after the slots), chains and
   * build rows at word offsets given in the uniform after the constants (see pipelineParamsAt).
   * (input, hashed, output, counter, u) u0 = (n, capacity).
   */
  pipelineProbe: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * Hash group-by insert (kernels/hash-aggregate.ts), a workgroup per tile of GROUP_ITEMS * WG rows: row i
   * joins its key's slot (head word = key ^ KEY_SALT for one-word keys, whose key KEY_SALT has slot mask + 1,
   * else first row + 1; group id word, then aggregate words) and updates the aggregates with atomics; meta[0]
   * counts groups (their ids), meta[1] = 1 if a row found the table full (`limit` groups, or no free slot).
   * The host zeroes table (mask + 2 slots) and meta. (input, table, meta, u) u0 = (n, mask, limit).
   */
  groupInsert: ['read', 'write', 'write', 'uniform'],
  /** Output row (group id) of each occupied slot: key words from its head or first row, decoded aggregates. (input, table, output, u) u0 = (slots). */
  groupEmit: ['read', 'read', 'write', 'uniform'],
  /**
   * Aggregating pipeline (kernels/pipeline.ts): workgroups stride over tiles of HASH_ITEMS * WG input rows; each row
   * passing the filter, probes and check updates its group's slot (workgroup table first, then the global table of
   * mask + 1 slots); flags = (groups, full, salt hit, overflow), zeroed by the host with the table. `hashed` as
   * pipelineProbe's. (input, hashed, table, flags, u) u0 = (n, mask, salt, room for groups).
   */
  pipelineAggregate: ['read', 'read', 'write', 'write', 'uniform'],
  /** The aggregating pipeline's output: one row per occupied slot, at its group id; flags[3] = 1 on a decimal overflow. (table, output, flags, u) u0 = (slots, salt, room). */
  pipelineGroups: ['read', 'write', 'write', 'uniform'],
  /**
   * Sorted aggregation (kernels/aggregate.ts), one workgroup: the tile states after the scanned group-start
   * counts of `flags` (offsets[tiles + 1 + t * SW..]) become, in place, the state open at each tile's start.
   * (offsets, u) u0 = (_, _, tiles), as flags'.
   */
  aggCarry: ['write', 'uniform'],
  /** CSV text (kernels/parse-text.ts): the quotes of each segment (quotes[segments] = 0). (text, quotes, u) u0 = (bytes, segments). */
  parseQuotes: ['read', 'write', 'uniform'],
  /**
   * Facts text (kernels/parse-text.ts): per segment of PARSE_SEGMENT_BYTES bytes its record ends to counts[i]
   * (counts[segments] = 0), state[0] |= 1 at a byte left to the host (NUL, invalid UTF-8), state[2] |= 1 at a
   * byte past ASCII; CSV: quotes[i] = the quotes before segment i.
   * (text, quotes, counts, state, u) u0 = (bytes, segments).
   */
  parseCount: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * Record ends (newline offsets) of each segment at ends[offsets[i]...], those below `room`.
   * (text, quotes, offsets, ends, u) u0 = (bytes, segments, room).
   */
  parseEnds: ['read', 'read', 'read', 'write', 'uniform'],
  /**
   * Record r's kept fields converted into row r, string fields as byte spans; state[0] |= 1 at a record left to the
   * host; records past `room` or the count (counts[segments], scanned) are not read. The file's layout is the column
   * table (parseColumnTable) and u1 (parseRowsUniform).
   * (text, ends, columns, rows, spans, state, counts, u) u0 = (bytes, segments, room).
   */
  parseRows: ['read', 'read', 'read', 'write', 'write', 'write', 'read', 'uniform'],
  /**
   * Distinct string fields of a parsed chunk (parseInternShaders): the table (2 words a slot) and state[1] zeroed
   * by the host; each new string's span appended to `distinct`; fields of records past the count (counts[segments])
   * are not read. (text, spans, table, distinct, fieldSlots, state, counts, u) u0 = (fields room, mask, segments, string columns).
   */
  parseIntern: ['read', 'read', 'write', 'write', 'write', 'write', 'read', 'uniform'],
  /**
   * Each string field's distinct index into its row word, for a group of string columns (PARSE_STRING_GROUP at
   * most). (table, fieldSlots, rows, state, counts, u) u0 = (the group's fields room, segments), u1 = (string
   * columns, columns in the group, its first column, row words), u2.. = the group's row word offsets.
   */
  parseStringIds: ['read', 'read', 'write', 'read', 'read', 'uniform'],
  /**
   * The byte length of distinct string d (0 past the state[1] found) to starts[d], starts[fields] = 0, for an
   * exclusive scan. (distinct, state, starts, u) u0 = (fields).
   */
  parseSpanLengths: ['read', 'read', 'write', 'uniform'],
  /**
   * The distinct strings' bytes back to back (string d at the scanned starts[d]), word i of them to out[i].
   * (text, distinct, starts, state, out, u) u0 = (words of out, fields).
   */
  parseGather: ['read', 'read', 'read', 'read', 'write', 'uniform'],
  /**
   * Parsed rows' string words (distinct indices) to dictionary ids through `dict`, for a group of string columns.
   * (dict, rows, u) u0 = (rows), u1 = (row words, columns in the group), u2.. = their row word offsets.
   */
  parseStrings: ['read', 'write', 'uniform'],
  /**
   * Byte string sort (kernels/string-sort.ts): rows (rank, key at `depth`, string) of the kept rows (scanned keep), or
   * (first = 1) of every string. (bytes, spans, rows, keep, out, u) u0 = (rows or strings, depth, first).
   */
  strSortNext: ['read', 'read', 'read', 'read', 'write', 'uniform'],
  /** Whether each sorted row's key differs from the row before it (heads[rows] = 0, for a scan). (rows, heads, u) u0 = (rows). */
  strSortHeads: ['read', 'write', 'uniform'],
  /** Where each new group (scanned heads) and each old group (by rank) starts among the rows. (rows, heads, subHead, groupHead, u) u0 = (rows). */
  strSortStarts: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * Each row's new rank; the ranks of the strings resolved, a mark and the string of each resolved group's rank;
   * keep[r] = 1 for the others (keep[rows] = 0). (rows, heads, subHead, groupHead, ranks, keep, mark, u) u0 = (rows, strings).
   */
  strSortRefine: ['write', 'read', 'read', 'read', 'write', 'write', 'write', 'uniform'],
  /**
   * Ranks to positions among the distinct strings (scanned mark), and each distinct string's start (distinct[d]) and
   * end (distinct[strings + d]). (spans, mark, ranks, distinct, u) u0 = (strings).
   */
  strSortDistinct: ['read', 'read', 'write', 'write', 'uniform'],
  /**
   * A list's spans from its starts (a device parse's distinct strings, gathered on the device, kept there):
   * spans[2 (at + s)] = base + starts[s], spans[2 (at + s) + 1] = base + starts[s + 1]. (starts, spans, u) u0 =
   * (strings, base, at).
   */
  strSortSpans: ['read', 'write', 'uniform'],
  /**
   * A store column's values into rows (kernels/store-columns.ts). (column, rows, state, u) u0 = (rows, row width,
   * word offset in a row, words per value), u1 = (string id base, dictionary size, is a string column, the rows' first
   * row), u2 = (bytes per narrow value, 0 for words; the frame's base lo, base hi, step).
   */
  storeColumn: ['read', 'write', 'write', 'uniform'],
  /**
   * Whether rows are strictly ascending by all words (kernels/rows-order.ts): state[0] |= 1 where one is not below
   * the next, state[1] = max over adjacent rows of the leading words they share (zeroed by the host). (rows, next,
   * state, u) u0 = (n, words per row, whether `next` holds the row after the last).
   */
  rowsOrder: ['read', 'read', 'write', 'uniform'],
  /**
   * Evenly spaced sample rows of one chunk into the samples (kernels/sample-rows.ts). (rows, out, u) u0 = (the
   * chunk's samples, its first sample, q, r: the relation's rows = q * samples + r), u1 = (samples, the chunk's first row).
   */
  sampleRows: ['read', 'write', 'uniform'],
  /**
   * Many iterations of a small-delta fixpoint loop in one workgroup (kernels/small-loop.ts). (fixed, rows, control,
   * u) u0 = (iterations this dispatch, most iterations in all, rows per scratch variable, rows per relation log).
   */
  smallLoop: ['read', 'write', 'write', 'uniform'],
} as const satisfies Record<string, readonly BindingKind[]>;

export type PassName = keyof typeof PASS_LAYOUTS;

/** Pass name -> WGSL module source. */
export type KernelShaders = Record<string, string>;

/**
 * Bind group of a kernel's string built-in tables (one read-only storage buffer at binding 0, laid out as
 * constants.ts TableSpec says). Only passes whose code reads the tables declare it; the host binds it for every
 * pass of a kernel that has tables, so the passes without a table binding keep their layouts.
 */
export const TABLES_GROUP = 1;
