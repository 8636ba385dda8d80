/**
 * A TPC-H data generator after the specification (TPC-H 3.0, clause 4.2): row counts per scale factor, key
 * relationships (sparse order keys, the four suppliers of each part, customers with key % 3 = 0 placing no
 * orders), value distributions, dates, phone numbers, part names from the colour words, types and containers
 * from their syllables, and comments cut from a text pool built by the spec's grammar. It is deterministic per
 * seed but does not reproduce dbgen's random streams, so its rows differ from the official dbgen's. Rows stream
 * to `.tbl` files (`|`-separated, trailing `|`) in large chunks.
 */
import { Rng } from '../graphs/prng.js';
import { defineTask, type Task } from '@vixen/io';

export const TPCH_TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'] as const;
export type TpchTable = (typeof TPCH_TABLES)[number];

export interface DbgenOptions {
  /** Scale factor (1 = about 1 GB); fractional values scale every table but nation and region. */
  sf: number;
  /** Output directory; created if missing. */
  out: string;
  seed?: number;
}

/** Rows written to each file, and the time it took. */
export interface GenResult<F extends string> {
  rows: Record<F, number>;
  ms: number;
}
export type DbgenResult = GenResult<TpchTable>;

export const REGIONS = ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'];
export const NATIONS: readonly [string, number][] = [
  ['ALGERIA', 0], ['ARGENTINA', 1], ['BRAZIL', 1], ['CANADA', 1], ['EGYPT', 4], ['ETHIOPIA', 0], ['FRANCE', 3],
  ['GERMANY', 3], ['INDIA', 2], ['INDONESIA', 2], ['IRAN', 4], ['IRAQ', 4], ['JAPAN', 2], ['JORDAN', 4], ['KENYA', 0],
  ['MOROCCO', 0], ['MOZAMBIQUE', 0], ['PERU', 1], ['CHINA', 2], ['ROMANIA', 3], ['SAUDI ARABIA', 4], ['VIETNAM', 2],
  ['RUSSIA', 3], ['UNITED KINGDOM', 3], ['UNITED STATES', 1],
];
export const COLORS = (
  'almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished chartreuse ' +
  'chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick floral forest frosted ' +
  'gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace lavender lawn lemon light lime linen ' +
  'magenta maroon medium metallic midnight mint misty moccasin navajo navy olive orange orchid pale papaya peach ' +
  'peru pink plum powder puff purple red rose rosy royal saddle salmon sandy seashell sienna sky slate smoke snow ' +
  'spring steel tan thistle tomato turquoise violet wheat white yellow'
).split(' ');
export const TYPE_S1 = ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'];
export const TYPE_S2 = ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'];
export const TYPE_S3 = ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'];
export const CONTAINER_S1 = ['SM', 'LG', 'MED', 'JUMBO', 'WRAP'];
export const CONTAINER_S2 = ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'];
export const SEGMENTS = ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'];
export const PRIORITIES = ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'];
const INSTRUCTIONS = ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'];
export const MODES = ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'];

// Clause 4.2.2.13: the grammar's word lists.
const NOUNS = (
  'foxes|ideas|theodolites|pinto beans|instructions|dependencies|excuses|platelets|asymptotes|courts|dolphins|' +
  'multipliers|sauternes|warthogs|frets|dinos|attainments|somas|Tiresias|patterns|forges|braids|hockey players|' +
  'frays|warhorses|dugouts|notornis|epitaphs|pearls|tithes|waters|orbits|gifts|sheaves|depths|sentiments|decoys|' +
  'realms|pains|grouches|escapades|packages|requests|accounts|deposits|theodolites'
).split('|');
const VERBS = (
  'sleep|wake|are|cajole|haggle|nag|use|boost|affix|detect|integrate|maintain|nod|was|lose|sublate|solve|thrash|' +
  'promise|engage|hinder|print|x-ray|breach|eat|grow|impress|mold|poach|serve|run|dazzle|snooze|doze|unwind|kindle|' +
  'play|hang|believe|doubt'
).split('|');
const ADJECTIVES = (
  'furious|sly|careful|blithe|quick|fluffy|slow|quiet|ruthless|thin|close|dogged|daring|brave|stealthy|permanent|' +
  'enticing|idle|busy|regular|final|ironic|even|bold|silent|special|pending|unusual|express'
).split('|');
const ADVERBS = (
  'sometimes|always|never|furiously|slyly|carefully|blithely|quickly|fluffily|slowly|quietly|ruthlessly|thinly|' +
  'closely|doggedly|daringly|bravely|stealthily|permanently|enticingly|idly|busily|regularly|finally|ironically|' +
  'evenly|boldly|silently'
).split('|');
const PREPOSITIONS = (
  'about|above|according to|across|after|against|along|alongside of|among|around|at|atop|before|behind|beneath|' +
  'beside|besides|between|beyond|by|despite|during|except|for|from|in place of|inside|instead of|into|near|of|on|' +
  'outside|over|past|since|through|throughout|to|toward|under|until|up|upon|without|with|within'
).split('|');
const AUXILIARIES = (
  'do|may|might|shall|will|would|can|could|should|ought to|must|will have to|shall have to|could have to|' +
  'should have to|must have to|need to|try to'
).split('|');
const TERMINATORS = ['.', ';', ':', '?', '!', '--'];

/** Days since 1970-01-01 of a calendar date. */
function dayNumber(y: number, m: number, d: number): number {
  return Math.floor(Date.UTC(y, m - 1, d) / 86_400_000);
}
export const START_DATE = dayNumber(1992, 1, 1);
export const END_DATE = dayNumber(1998, 12, 31);
const CURRENT_DATE = dayNumber(1995, 6, 17);

/** Generation state: the random source, the text pool, and formatting caches. */
export class Gen {
  readonly rng: Rng;
  /**
   * Draw as usual but make no output-only strings (vstring, phone): a pass that only advances the stream to where a
   * chunk of rows starts (dbgenParallel). Strings whose length feeds a later draw (text) keep their length.
   */
  skip = false;
  private pool = '';
  /** The pool's prefixes by length, as text() gives them in a pass that skips. */
  private readonly prefixes: string[] = [];
  private dateText = new Map<number, string>();

  constructor(seed: number) {
    this.rng = new Rng(seed);
    this.pool = this.textPool(1 << 21);
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + this.rng.nextInt(hi - lo + 1);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.rng.nextInt(xs.length)]!;
  }

  /** Clause 4.2.2.14: a text pool of sentences from the grammar. */
  private textPool(size: number): string {
    const parts: string[] = [];
    let n = 0;
    while (n < size) {
      const s = this.sentence();
      parts.push(s);
      n += s.length + 1;
    }
    return parts.join(' ');
  }

  private nounPhrase(): string {
    switch (this.rng.nextInt(4)) {
      case 0:
        return this.pick(NOUNS);
      case 1:
        return `${this.pick(ADJECTIVES)} ${this.pick(NOUNS)}`;
      case 2:
        return `${this.pick(ADJECTIVES)}, ${this.pick(ADJECTIVES)} ${this.pick(NOUNS)}`;
      default:
        return `${this.pick(ADVERBS)} ${this.pick(ADJECTIVES)} ${this.pick(NOUNS)}`;
    }
  }

  private verbPhrase(): string {
    switch (this.rng.nextInt(4)) {
      case 0:
        return this.pick(VERBS);
      case 1:
        return `${this.pick(AUXILIARIES)} ${this.pick(VERBS)}`;
      case 2:
        return `${this.pick(VERBS)} ${this.pick(ADVERBS)}`;
      default:
        return `${this.pick(AUXILIARIES)} ${this.pick(VERBS)} ${this.pick(ADVERBS)}`;
    }
  }

  private sentence(): string {
    const prep = () => `${this.pick(PREPOSITIONS)} the ${this.nounPhrase()}`;
    switch (this.rng.nextInt(5)) {
      case 0:
        return `${this.nounPhrase()} ${this.verbPhrase()}${this.pick(TERMINATORS)}`;
      case 1:
        return `${this.nounPhrase()} ${this.verbPhrase()} ${prep()}${this.pick(TERMINATORS)}`;
      case 2:
        return `${this.nounPhrase()} ${this.verbPhrase()} ${this.nounPhrase()}${this.pick(TERMINATORS)}`;
      case 3:
        return `${this.nounPhrase()} ${prep()} ${this.verbPhrase()} ${this.nounPhrase()}${this.pick(TERMINATORS)}`;
      default:
        return `${this.nounPhrase()} ${prep()} ${this.verbPhrase()} ${prep()}${this.pick(TERMINATORS)}`;
    }
  }

  /** Clause 4.2.2.10: a random substring of the pool, length uniform in [lo, hi]. Never holds `|`. */
  text(lo: number, hi: number): string {
    const len = this.int(lo, hi);
    const at = this.rng.nextInt(this.pool.length - len);
    // A pass that skips needs the length alone (a supplier's comment: the next draw reads it), and a new string per
    // comment kept its garbage collector busy.
    if (this.skip) return (this.prefixes[len] ??= this.pool.slice(0, len));
    return this.pool.slice(at, at + len);
  }

  /** Clause 4.2.2.7: random alphanumeric string, length uniform in [lo, hi]. */
  vstring(lo: number, hi: number): string {
    const alphabet = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,';
    const len = this.int(lo, hi);
    let s = '';
    if (this.skip) {
      for (let i = 0; i < len; i++) this.rng.nextInt(alphabet.length);
      return s;
    }
    for (let i = 0; i < len; i++) s += alphabet[this.rng.nextInt(alphabet.length)];
    return s;
  }

  /** Clause 4.2.2.9: country code (nation + 10), then three local groups. */
  phone(nation: number): string {
    if (this.skip) {
      this.int(100, 999);
      this.int(100, 999);
      this.int(1000, 9999);
      return '';
    }
    return `${nation + 10}-${this.int(100, 999)}-${this.int(100, 999)}-${this.int(1000, 9999)}`;
  }

  date(day: number): string {
    let s = this.dateText.get(day);
    if (s === undefined) {
      s = new Date(day * 86_400_000).toISOString().slice(0, 10);
      this.dateText.set(day, s);
    }
    return s;
  }
}

/** Cents as a decimal with two fractional digits. */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const a = Math.abs(cents);
  const c = a % 100;
  return `${sign}${(a - c) / 100}.${c < 10 ? '0' : ''}${c}`;
}

export const pad9 = (n: number): string => String(n).padStart(9, '0');

/** Clause 4.2.3: the retail price of a part, in cents. */
export function retailCents(partkey: number): number {
  return 90000 + (Math.floor(partkey / 10) % 20001) + 100 * (partkey % 1000);
}

/** Clause 4.2.3: the i-th (0..3) supplier of a part among `s` suppliers. */
function partSupplier(partkey: number, i: number, s: number): number {
  return ((partkey + i * (Math.floor(s / 4) + Math.floor((partkey - 1) / s))) % s) + 1;
}

/** Clause 4.2.3: order keys use only the first 8 of every 32 values. */
function sparseOrderKey(i: number): number {
  return Math.floor(i / 8) * 32 + (i % 8) + 1;
}

/** Checks the scale factor; row counts scaled by it (at least 1). */
export function scaling(sf: number): (base: number) => number {
  if (!(sf > 0)) throw new Error(`scale factor must be positive, got ${sf}`);
  return (base) => Math.max(1, Math.floor(base * sf));
}

/** Where a line goes; undefined in a pass that only advances the random stream (no line is made). */
export type Emit = ((line: string) => void) | undefined;

/** The sizes of one scale factor and what the tables after nation share. */
export interface TpchSizes {
  sf: number;
  nSupp: number;
  nPart: number;
  nCust: number;
  nOrders: number;
  nClerks: number;
  /** Clause 4.2.3: suppliers whose comment carries "Customer ... Complaints" or "... Recommends". */
  special: Map<number, string>;
}

/**
 * The tables made in chunks of rows (each but the last writing a second file along: partsupp's rows with their
 * part, lineitem's with their order).
 */
const CHUNKED = ['supplier', 'customer', 'part', 'orders'] as const;
type ChunkedTable = (typeof CHUNKED)[number];
export const TPCH: ChunkedTables<ChunkedTable, TpchTable, TpchSizes> = {
  tables: CHUNKED,
  files: { supplier: ['supplier'], customer: ['customer'], part: ['part', 'partsupp'], orders: ['orders', 'lineitem'] },
  count: (z, t) => ({ supplier: z.nSupp, customer: z.nCust, part: z.nPart, orders: z.nOrders })[t],
  // About 10 to 20 MB of text each.
  chunkRows: { supplier: 100_000, customer: 80_000, part: 20_000, orders: 25_000 },
  rows: tableRows,
  task: () => dbgenChunkTask,
};

/** region and nation (few rows, made first), then the special suppliers: the draws before the chunked tables. */
export function startTables(g: Gen, sf: number, scaled: (base: number) => number, region: Emit, nation: Emit): TpchSizes {
  REGIONS.forEach((name, k) => {
    const comment = g.text(31, 115);
    region?.(`${k}|${name}|${comment}|\n`);
  });
  NATIONS.forEach(([name, r], k) => {
    const comment = g.text(31, 114);
    nation?.(`${k}|${name}|${r}|${comment}|\n`);
  });
  const nSupp = scaled(10_000);
  const special = new Map<number, string>();
  const nSpecial = Math.max(1, Math.floor(5 * sf));
  while (special.size < Math.min(2 * nSpecial, nSupp)) {
    const k = g.int(1, nSupp);
    if (!special.has(k)) special.set(k, special.size < nSpecial ? 'Complaints' : 'Recommends');
  }
  return { sf, nSupp, nPart: scaled(200_000), nCust: scaled(150_000), nOrders: scaled(1_500_000), nClerks: Math.max(1, Math.floor(1000 * sf)), special };
}

/** TPCH.rows: row i has key i + 1 (orders: the i-th sparse key). */
function tableRows(g: Gen, z: TpchSizes, t: ChunkedTable, from: number, to: number, emit: readonly Emit[]): number[] {
  const [out, out2] = emit;
  let second = 0;
  switch (t) {
    case 'supplier':
      for (let k = from + 1; k <= to; k++) {
        const nk = g.int(0, 24);
        let comment = g.text(25, 100);
        const word = z.special.get(k);
        if (word !== undefined) {
          const inner = `Customer ${g.text(0, 5)}${word}`;
          // The phrase overwrites part of the comment, which keeps its length where it is long enough.
          const at = g.int(0, Math.max(0, comment.length - inner.length));
          comment = comment.slice(0, at) + inner + comment.slice(at + inner.length);
        }
        const address = g.vstring(10, 40);
        const phone = g.phone(nk);
        const acctbal = g.int(-99999, 999999);
        out?.(`${k}|Supplier#${pad9(k)}|${address}|${nk}|${phone}|${money(acctbal)}|${comment}|\n`);
      }
      break;
    case 'customer':
      for (let k = from + 1; k <= to; k++) {
        const nk = g.int(0, 24);
        const address = g.vstring(10, 40);
        const phone = g.phone(nk);
        const acctbal = g.int(-99999, 999999);
        const segment = g.pick(SEGMENTS);
        const comment = g.text(29, 116);
        out?.(`${k}|Customer#${pad9(k)}|${address}|${nk}|${phone}|${money(acctbal)}|${segment}|${comment}|\n`);
      }
      break;
    case 'part': {
      const words = new Array<string>(5);
      for (let k = from + 1; k <= to; k++) {
        // Five distinct colour words.
        for (let i = 0; i < 5; i++) {
          let w: string;
          do w = g.pick(COLORS);
          while (words.slice(0, i).includes(w));
          words[i] = w;
        }
        const m = g.int(1, 5);
        const type = `${g.pick(TYPE_S1)} ${g.pick(TYPE_S2)} ${g.pick(TYPE_S3)}`;
        const container = `${g.pick(CONTAINER_S1)} ${g.pick(CONTAINER_S2)}`;
        const brand = g.int(1, 5);
        const size = g.int(1, 50);
        const comment = g.text(5, 22);
        out?.(`${k}|${words.join(' ')}|Manufacturer#${m}|Brand#${m}${brand}|${type}|${size}|${container}|${money(retailCents(k))}|${comment}|\n`);
        for (let i = 0; i < 4; i++) {
          const qty = g.int(1, 9999);
          const cost = g.int(100, 100000);
          const psComment = g.text(49, 198);
          out2?.(`${k}|${partSupplier(k, i, z.nSupp)}|${qty}|${money(cost)}|${psComment}|\n`);
        }
        second += 4;
      }
      break;
    }
    case 'orders': {
      const lines: string[] = [];
      for (let i = from; i < to; i++) {
        const ok = sparseOrderKey(i);
        // Customers whose key is a multiple of 3 place no orders.
        let ck = g.int(1, z.nCust);
        for (let delta = 1; ck % 3 === 0; delta = -delta) ck = Math.min(Math.max(ck + delta, 1), z.nCust);
        const orderDate = g.int(START_DATE, END_DATE - 151);
        const nLines = g.int(1, 7);
        let totalCents = 0;
        let shippedF = 0;
        lines.length = 0;
        for (let ln = 1; ln <= nLines; ln++) {
          const pk = g.int(1, z.nPart);
          const sk = partSupplier(pk, g.int(0, 3), z.nSupp);
          const qty = g.int(1, 50);
          const price = qty * retailCents(pk);
          const disc = g.int(0, 10);
          const tax = g.int(0, 8);
          const ship = orderDate + g.int(1, 121);
          const commit = orderDate + g.int(30, 90);
          const receipt = ship + g.int(1, 30);
          const flag = receipt <= CURRENT_DATE ? (g.rng.nextInt(2) === 0 ? 'R' : 'A') : 'N';
          const status = ship > CURRENT_DATE ? 'O' : 'F';
          if (status === 'F') shippedF++;
          totalCents += Math.floor((Math.floor((price * (100 - disc)) / 100) * (100 + tax)) / 100);
          const instruct = g.pick(INSTRUCTIONS);
          const mode = g.pick(MODES);
          const comment = g.text(10, 43);
          if (out2) {
            lines.push(
              `${ok}|${pk}|${sk}|${ln}|${qty}|${money(price)}|0.${disc < 10 ? '0' : ''}${disc}|0.0${tax}|${flag}|${status}|` +
                `${g.date(ship)}|${g.date(commit)}|${g.date(receipt)}|${instruct}|${mode}|${comment}|\n`,
            );
          }
        }
        second += nLines;
        const orderStatus = shippedF === nLines ? 'F' : shippedF === 0 ? 'O' : 'P';
        const priority = g.pick(PRIORITIES);
        const clerk = g.int(1, z.nClerks);
        const comment = g.text(19, 78);
        out?.(`${ok}|${ck}|${orderStatus}|${money(totalCents)}|${g.date(orderDate)}|${priority}|Clerk#${pad9(clerk)}|0|${comment}|\n`);
        for (const l of lines) out2!(l);
      }
      break;
    }
  }
  return [to - from, second];
}

export type DbgenChunk = TableChunk<ChunkedTable, TpchSizes>;
/** A chunk of a TPC-H table (the worker pool's task). */
export const dbgenChunkTask = defineTask('bench/dbgen-chunk', import.meta.url, (c: DbgenChunk): TableChunkResult => tableChunk(TPCH, c));

/**
 * A generator's tables after its first few (TPC-H's, SSB's), each made in chunks of rows on one thread (generate)
 * or on worker threads (generateParallel). Z holds what the rows read besides the random stream (sizes); it goes
 * to the workers by structured clone.
 */
export interface ChunkedTables<T extends string, F extends string, Z> {
  /** In the order they are made. */
  tables: readonly T[];
  /** The files each table writes: a second one goes along with the first (partsupp's rows with their part). */
  files: Readonly<Record<T, readonly F[]>>;
  /** The units a table's chunks split: rows of its first file (orders, whose lines go along). */
  count(z: Z, t: T): number;
  /** Units per chunk. */
  chunkRows: Readonly<Record<T, number>>;
  /**
   * Units [from, to) of table t, drawn in one fixed order so that a pass without output (emit empty, g.skip)
   * leaves the stream where writing them would. Returns the rows of each of the table's files.
   */
  rows(g: Gen, z: Z, t: T, from: number, to: number, emit: readonly Emit[]): number[];
  /** The worker task that makes a chunk (tableChunk); a thunk, as the task refers back to these tables. */
  task(): Task<TableChunk<T, Z>, TableChunkResult>;
}

/** Writes the tables before the chunked ones (their rows into `rows`); the sizes of the chunked ones. */
export type StartTables<F extends string, Z> = (g: Gen, options: DbgenOptions, scaled: (base: number) => number, rows: Record<F, number>) => Z;

/** Options of a parallel run; chunkRows (all tables) is for tests. */
export type ParallelOptions = DbgenOptions & { chunkRows?: number };

/** A chunk of one table, for a worker: the stream's state where the chunk starts. */
export interface TableChunk<T extends string, Z> {
  seed: number;
  sizes: Z;
  table: T;
  from: number;
  to: number;
  state: [number, number, number, number];
}

/** The text of a chunk's files (ASCII) and their rows. */
export interface TableChunkResult {
  files: Uint8Array[];
  rows: number[];
}

/** Lines as bytes, each written as it is made (a chunk's lines kept as strings until joined kept the GC busy). */
class ByteSink {
  // Not from Buffer's shared pool, whose memory must not move to another thread.
  private buf = Buffer.allocUnsafeSlow(1 << 20);
  private used = 0;

  push(line: string): void {
    // Every generated character is ASCII, where latin1 and UTF-8 agree.
    if (this.used + line.length > this.buf.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(2 * this.buf.length, this.used + line.length));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.used += this.buf.write(line, this.used, 'latin1');
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }
}

/** Gen of the last seed a worker used: its text pool costs more than a chunk's rows. */
let workerGen: { seed: number; g: Gen } | undefined;

/** Generates one chunk (in a worker thread: parallel/worker.ts). */
export function tableChunk<T extends string, F extends string, Z>(c: ChunkedTables<T, F, Z>, chunk: TableChunk<T, Z>): TableChunkResult {
  if (workerGen?.seed !== chunk.seed) workerGen = { seed: chunk.seed, g: new Gen(chunk.seed) };
  const g = workerGen.g;
  g.rng.setState(chunk.state);
  const sinks = c.files[chunk.table].map(() => new ByteSink());
  const rows = c.rows(g, chunk.sizes, chunk.table, chunk.from, chunk.to, sinks.map((s) => (line: string) => s.push(line)));
  return { files: sinks.map((s) => s.bytes()), rows };
}

/**
 * Every table's `.tbl` text in memory, the bytes `dbgen` writes for the same scale factor and seed: for a browser
 * page (packages/web), which has no files. This module imports no Node built-in for that reason (the file writers
 * are dbgen-files.ts).
 */
export function dbgenText(options: Omit<DbgenOptions, 'out'>): Record<TpchTable, string> {
  const scaled = scaling(options.sf);
  const g = new Gen(options.seed ?? 1);
  const lines = Object.fromEntries(TPCH_TABLES.map((t) => [t, [] as string[]])) as Record<TpchTable, string[]>;
  const z = startTables(g, options.sf, scaled, (l) => lines.region.push(l), (l) => lines.nation.push(l));
  for (const t of TPCH.tables) TPCH.rows(g, z, t, 0, TPCH.count(z, t), TPCH.files[t].map((f) => (l: string) => void lines[f].push(l)));
  return Object.fromEntries(TPCH_TABLES.map((t) => [t, lines[t].join('')])) as Record<TpchTable, string>;
}
