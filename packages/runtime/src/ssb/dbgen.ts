/**
 * A Star Schema Benchmark data generator after O'Neil et al. (SSB, revision 3) and ssb-dbgen: row counts per
 * scale factor (lineorder about 6M*SF from 1.5M*SF orders of 1..7 lines, customer 30000*SF, supplier 2000*SF,
 * part 200000*(1+log2 SF), seven calendar years of dates), the region/nation/city hierarchy (a city is the nation
 * name cut or padded to 9 characters plus a digit), the MFGR#m / MFGR#mc / MFGR#mcb part hierarchy (5
 * manufacturers, 25 categories, 1000 brands), quantities 1..50, discounts 0..10, revenue = extended price less the
 * discount, supply cost 60% of the retail price, and dates as yyyymmdd keys into the date table. Prices are
 * integer cents as in ssb-dbgen. It is deterministic per seed but does not reproduce ssb-dbgen's random streams.
 * The date table is named `dwdate` (`date` is a type name in LogiQL); rename ssb-dbgen's `date.tbl` to use its
 * files. Rows stream to `.tbl` files (`|`-separated, trailing `|`).
 */
import { join } from 'node:path';
import {
  COLORS,
  CONTAINER_S1,
  CONTAINER_S2,
  type DbgenOptions,
  END_DATE,
  Gen,
  MODES,
  NATIONS,
  pad9,
  PRIORITIES,
  REGIONS,
  retailCents,
  SEGMENTS,
  START_DATE,
  startGen,
  TblWriter,
  TYPE_S1,
  TYPE_S2,
  TYPE_S3,
} from '../tpch/dbgen.js';

export const SSB_TABLES = ['lineorder', 'customer', 'supplier', 'part', 'dwdate'] as const;
export type SsbTable = (typeof SSB_TABLES)[number];

/** Scale factor (1 = 6M lineorders; fractional values scale every table but the dates), output folder, seed. */
export type SsbgenOptions = DbgenOptions;

export interface SsbgenResult {
  rows: Record<SsbTable, number>;
  ms: number;
}

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

/** City, nation and region of a random customer or supplier, as `.tbl` fields, and the nation key. */
function place(g: Gen): { fields: string; nation: number } {
  const nation = g.int(0, NATIONS.length - 1);
  const [name, region] = NATIONS[nation]!;
  return { fields: `${ssbCity(name, g.int(0, 9))}|${name}|${REGIONS[region]}`, nation };
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

export function ssbgen(options: SsbgenOptions): SsbgenResult {
  const t0 = performance.now();
  const { sf, out } = options;
  const { g, scaled } = startGen(options);
  const nCust = scaled(30_000);
  const nSupp = scaled(2_000);
  // ssb-dbgen grows the part table logarithmically from SF 1 on; below it, parts scale linearly.
  const nPart = sf >= 1 ? Math.floor(200_000 * (1 + Math.log2(sf))) : scaled(200_000);
  const nOrders = scaled(1_500_000);
  const rows = {} as Record<SsbTable, number>;
  const open = (t: SsbTable) => new TblWriter(join(out, `${t}.tbl`));
  const close = (t: SsbTable, w: TblWriter) => {
    w.close();
    rows[t] = w.rows;
  };

  const dates = open('dwdate');
  writeDates(dates);
  close('dwdate', dates);

  const customer = open('customer');
  for (let k = 1; k <= nCust; k++) {
    const p = place(g);
    customer.row(`${k}|Customer#${pad9(k)}|${g.vstring(10, 25)}|${p.fields}|${g.phone(p.nation)}|${g.pick(SEGMENTS)}|\n`);
  }
  close('customer', customer);

  const supplier = open('supplier');
  for (let k = 1; k <= nSupp; k++) {
    const p = place(g);
    supplier.row(`${k}|Supplier#${pad9(k)}|${g.vstring(10, 25)}|${p.fields}|${g.phone(p.nation)}|\n`);
  }
  close('supplier', supplier);

  const part = open('part');
  for (let k = 1; k <= nPart; k++) {
    const m = g.int(1, 5);
    const category = `MFGR#${m}${g.int(1, 5)}`;
    part.row(
      `${k}|${g.pick(COLORS)} ${g.pick(COLORS)}|MFGR#${m}|${category}|${category}${g.int(1, 40)}|${g.pick(COLORS)}|` +
        `${g.pick(TYPE_S1)} ${g.pick(TYPE_S2)} ${g.pick(TYPE_S3)}|${g.int(1, 50)}|${g.pick(CONTAINER_S1)} ${g.pick(CONTAINER_S2)}|\n`,
    );
  }
  close('part', part);

  // Orders are dated like TPC-H's (the last 151 days of 1998 get none); the order's lines are written together
  // once their total price is known.
  const lineorder = open('lineorder');
  const keys = new Map<number, number>();
  const key = (day: number): number => {
    let k = keys.get(day);
    if (k === undefined) keys.set(day, (k = dateKey(day)));
    return k;
  };
  const lines: string[] = [];
  for (let o = 1; o <= nOrders; o++) {
    const ck = g.int(1, nCust);
    const day = g.int(START_DATE, END_DATE - 151);
    const priority = g.pick(PRIORITIES);
    const nLines = g.int(1, 7);
    let total = 0;
    lines.length = 0;
    for (let ln = 1; ln <= nLines; ln++) {
      const pk = g.int(1, nPart);
      const retail = retailCents(pk);
      const qty = g.int(1, 50);
      const price = qty * retail;
      const disc = g.int(0, 10);
      const tax = g.int(0, 8);
      const revenue = Math.floor((price * (100 - disc)) / 100);
      total += Math.floor((revenue * (100 + tax)) / 100);
      lines.push(
        `|${ln}|${ck}|${pk}|${g.int(1, nSupp)}|${key(day)}|${priority}|0|${qty}|${price}|`,
        `|${disc}|${revenue}|${Math.floor((6 * retail) / 10)}|${tax}|${key(day + g.int(30, 90))}|${g.pick(MODES)}|\n`,
      );
    }
    for (let i = 0; i < lines.length; i += 2) lineorder.row(`${o}${lines[i]}${total}${lines[i + 1]}`);
  }
  close('lineorder', lineorder);
  return { rows, ms: performance.now() - t0 };
}
