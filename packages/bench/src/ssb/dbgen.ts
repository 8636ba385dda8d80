/**
 * A Star Schema Benchmark data generator after O'Neil et al. (SSB, revision 3) and ssb-dbgen: row counts per
 * scale factor (lineorder about 6M*SF from 1.5M*SF orders of 1..7 lines, customer 30000*SF, supplier 2000*SF,
 * part 200000*(1+log2 SF), seven calendar years of dates), the region/nation/city hierarchy (a city is the nation
 * name cut or padded to 9 characters plus a digit), the MFGR#m / MFGR#mc / MFGR#mcb part hierarchy (5
 * manufacturers, 25 categories, 1000 brands), quantities 1..50, discounts 0..10, revenue = extended price less the
 * discount, supply cost 60% of the retail price, and dates as yyyymmdd keys into the date table. Prices are
 * integer cents as in ssb-dbgen. It is deterministic per seed but does not reproduce ssb-dbgen's random streams.
 * The date table is named `dwdate` (`date` is a type name in LogiQL); rename ssb-dbgen's `date.tbl` to use its
 * files. Rows stream to `.tbl` files (`|`-separated, trailing `|`); ssbgenParallel makes the same bytes on every
 * core.
 */
import { join } from 'node:path';
import { defineTask } from '@vixen/io';
import {
  type ChunkedTables,
  COLORS,
  CONTAINER_S1,
  CONTAINER_S2,
  type DbgenOptions,
  type Emit,
  END_DATE,
  type Gen,
  type GenResult,
  MODES,
  NATIONS,
  pad9,
  type ParallelOptions,
  PRIORITIES,
  REGIONS,
  retailCents,
  SEGMENTS,
  START_DATE,
  type TableChunk,
  tableChunk,
  type TableChunkResult,
  TYPE_S1,
  TYPE_S2,
  TYPE_S3,
} from '../tpch/dbgen.js';
import { generate, generateParallel, TblWriter } from '../tpch/dbgen-files.js';

export const SSB_TABLES = ['lineorder', 'customer', 'supplier', 'part', 'dwdate'] as const;
export type SsbTable = (typeof SSB_TABLES)[number];

/** Scale factor (1 = 6M lineorders; fractional values scale every table but the dates), output folder, seed. */
export type SsbgenOptions = DbgenOptions;

export type SsbgenResult = GenResult<SsbTable>;

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const SEASONS = ['Winter', 'Winter', 'Spring', 'Spring', 'Spring', 'Summer', 'Summer', 'Summer', 'Fall', 'Fall', 'Fall', 'Christmas'];
/** Month and day of the holidays that d_holidayfl marks. */
const HOLIDAYS = new Set(['1-1', '7-4', '11-11', '12-24', '12-25', '12-31']);

/** A city: the nation's name cut or padded to 9 characters, then a digit 0..9. */
export function ssbCity(nation: string, digit: number): string {
  return nation.slice(0, 9).padEnd(9, ' ') + digit;
}

/** The yyyymmdd key of a day number (days since 1970-01-01). */
function dateKey(day: number): number {
  const d = new Date(day * 86_400_000);
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
}

/** City, nation and region of a customer or supplier, from its nation and city digit, as `.tbl` fields. */
function placeFields(nation: number, city: number): string {
  const [name, region] = NATIONS[nation]!;
  return `${ssbCity(name, city)}|${name}|${REGIONS[region]}`;
}

function writeDates(w: TblWriter): void {
  for (let day = START_DATE; day <= END_DATE; day++) {
    const d = new Date(day * 86_400_000);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    const dom = d.getUTCDate();
    const dow = d.getUTCDay();
    const doy = day - Math.floor(Date.UTC(y, 0, 1) / 86_400_000) + 1;
    const lastInMonth = new Date((day + 1) * 86_400_000).getUTCDate() === 1;
    w.row(
      `${dateKey(day)}|${MONTHS[m]} ${dom}, ${y}|${WEEKDAYS[dow]}|${MONTHS[m]}|${y}|${y * 100 + m + 1}|` +
        `${MONTHS[m]!.slice(0, 3)}${y}|${dow + 1}|${dom}|${doy}|${m + 1}|${Math.floor((doy - 1) / 7) + 1}|${SEASONS[m]}|` +
        `${dow === 6 ? 1 : 0}|${lastInMonth ? 1 : 0}|${HOLIDAYS.has(`${m + 1}-${dom}`) ? 1 : 0}|${dow >= 1 && dow <= 5 ? 1 : 0}|\n`,
    );
  }
}

/** The sizes of one scale factor. */
interface SsbSizes {
  nCust: number;
  nSupp: number;
  nPart: number;
  nOrders: number;
}

/** Writes dwdate.tbl (it draws nothing); the sizes of the other tables. */
function writeStart(_g: Gen, options: SsbgenOptions, scaled: (base: number) => number, rows: Record<SsbTable, number>): SsbSizes {
  const dates = new TblWriter(join(options.out, 'dwdate.tbl'));
  writeDates(dates);
  dates.close();
  rows.dwdate = dates.rows;
  return {
    nCust: scaled(30_000),
    nSupp: scaled(2_000),
    // ssb-dbgen grows the part table logarithmically from SF 1 on; below it, parts scale linearly.
    nPart: options.sf >= 1 ? Math.floor(200_000 * (1 + Math.log2(options.sf))) : scaled(200_000),
    nOrders: scaled(1_500_000),
  };
}

/** SSB.rows: row i has key i + 1; lineorder's units are orders, their lines written together. */
function tableRows(g: Gen, z: SsbSizes, t: ChunkedTable, from: number, to: number, [out]: readonly Emit[]): number[] {
  switch (t) {
    case 'customer':
    case 'supplier':
      for (let k = from + 1; k <= to; k++) {
        const nation = g.int(0, NATIONS.length - 1);
        const city = g.int(0, 9);
        const address = g.vstring(10, 25);
        const phone = g.phone(nation);
        // A customer has a market segment besides.
        const segment = t === 'customer' ? `${g.pick(SEGMENTS)}|` : '';
        out?.(`${k}|${t === 'customer' ? 'Customer' : 'Supplier'}#${pad9(k)}|${address}|${placeFields(nation, city)}|${phone}|${segment}\n`);
      }
      return [to - from];
    case 'part':
      for (let k = from + 1; k <= to; k++) {
        const m = g.int(1, 5);
        const category = `MFGR#${m}${g.int(1, 5)}`;
        const name = `${g.pick(COLORS)} ${g.pick(COLORS)}`;
        const brand = g.int(1, 40);
        const color = g.pick(COLORS);
        const type = `${g.pick(TYPE_S1)} ${g.pick(TYPE_S2)} ${g.pick(TYPE_S3)}`;
        const size = g.int(1, 50);
        const container = `${g.pick(CONTAINER_S1)} ${g.pick(CONTAINER_S2)}`;
        out?.(`${k}|${name}|MFGR#${m}|${category}|${category}${brand}|${color}|${type}|${size}|${container}|\n`);
      }
      return [to - from];
    case 'lineorder': {
      // Orders are dated like TPC-H's (the last 151 days of 1998 get none); the order's lines are written together
      // once their total price is known.
      const keys = new Map<number, number>();
      const key = (day: number): number => {
        let k = keys.get(day);
        if (k === undefined) keys.set(day, (k = dateKey(day)));
        return k;
      };
      const lines: string[] = [];
      let nRows = 0;
      for (let o = from + 1; o <= to; o++) {
        const ck = g.int(1, z.nCust);
        const day = g.int(START_DATE, END_DATE - 151);
        const priority = g.pick(PRIORITIES);
        const nLines = g.int(1, 7);
        let total = 0;
        lines.length = 0;
        for (let ln = 1; ln <= nLines; ln++) {
          const pk = g.int(1, z.nPart);
          const retail = retailCents(pk);
          const qty = g.int(1, 50);
          const price = qty * retail;
          const disc = g.int(0, 10);
          const tax = g.int(0, 8);
          const sk = g.int(1, z.nSupp);
          const commit = day + g.int(30, 90);
          const mode = g.pick(MODES);
          const revenue = Math.floor((price * (100 - disc)) / 100);
          total += Math.floor((revenue * (100 + tax)) / 100);
          if (out) {
            lines.push(
              `|${ln}|${ck}|${pk}|${sk}|${key(day)}|${priority}|0|${qty}|${price}|`,
              `|${disc}|${revenue}|${Math.floor((6 * retail) / 10)}|${tax}|${key(commit)}|${mode}|\n`,
            );
          }
        }
        nRows += nLines;
        if (out) for (let i = 0; i < lines.length; i += 2) out(`${o}${lines[i]}${total}${lines[i + 1]}`);
      }
      return [nRows];
    }
  }
}

const CHUNKED = ['customer', 'supplier', 'part', 'lineorder'] as const;
type ChunkedTable = (typeof CHUNKED)[number];
const SSB: ChunkedTables<ChunkedTable, SsbTable, SsbSizes> = {
  tables: CHUNKED,
  files: { customer: ['customer'], supplier: ['supplier'], part: ['part'], lineorder: ['lineorder'] },
  count: (z, t) => ({ customer: z.nCust, supplier: z.nSupp, part: z.nPart, lineorder: z.nOrders })[t],
  // About 10 MB of text each.
  chunkRows: { customer: 100_000, supplier: 100_000, part: 100_000, lineorder: 25_000 },
  rows: tableRows,
  task: () => ssbgenChunkTask,
};

export const ssbgen = (options: SsbgenOptions): SsbgenResult => generate(SSB, options, writeStart);

/** ssbgen on every core (generateParallel): the same bytes. */
export const ssbgenParallel = (options: ParallelOptions): Promise<SsbgenResult> => generateParallel(SSB, options, writeStart);

export type SsbgenChunk = TableChunk<ChunkedTable, SsbSizes>;
/** A chunk of an SSB table (the worker pool's task). */
export const ssbgenChunkTask = defineTask('bench/ssbgen-chunk', import.meta.url, (c: SsbgenChunk): TableChunkResult => tableChunk(SSB, c));
