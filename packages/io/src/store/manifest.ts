/**
 * The manifest of a columnar store (`vixen-store.json`), checked with zod: the format and version first (so an
 * older or newer store is named as such), then every field. A store is a folder of little-endian u32 column files
 * in the device word encoding (encoding.ts), one per column per relation, and a dictionary per string column; the manifest
 * gives each file's size and CRC-32, so a truncated, rewritten or corrupt file is an error, never a wrong answer.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { VixenError, errorAt, type ScalarType } from '@vixen/queryplan';

export const STORE_MANIFEST = 'vixen-store.json';
export const STORE_FORMAT = 'vixen-store';
/**
 * The newest store version, 2: a column may be omitted (`vixen import --columns read`). A store without omitted
 * columns is written as version 1, which older Vixens read too; an older Vixen names a version 2 store as such.
 */
export const STORE_VERSION = 2;
/** Versions this Vixen reads. */
const READ_VERSIONS = [1, 2];

const SCALAR_TYPES = ['int32', 'uint32', 'int64', 'float32', 'decimal', 'boolean', 'date', 'string'] as const satisfies readonly ScalarType[];

const count = z.number().int().nonnegative();
/** A path inside the store: relative, without `..`, so a manifest names only the store's own files. */
const storePath = z.string().regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\0]+$/, 'expected a path inside the store');
const fileSchema = z.object({ file: storePath, bytes: count, crc32: count });

/** A string column's dictionary: its distinct strings, sorted in JS code-unit order (the order string ids keep). */
const dictionarySchema = z.object({
  strings: count,
  /** Their UTF-8 bytes back to back. */
  bytes: fileSchema,
  /** `strings + 1` u64 offsets into `bytes` (string i is bytes [offsets[i], offsets[i+1])). */
  offsets: fileSchema,
});

const storedColumnSchema = fileSchema
  .extend({ name: z.string(), type: z.enum(SCALAR_TYPES), dictionary: dictionarySchema.optional() })
  .refine((c) => (c.type === 'string') === (c.dictionary !== undefined), 'expected a dictionary for a string column, and only for one');
/** A column left out of the store (version 2): the program that imported it did not read it. */
const omittedColumnSchema = z.object({ name: z.string(), type: z.enum(SCALAR_TYPES), omitted: z.literal(true) }).strict();
const columnSchema = z.union([omittedColumnSchema, storedColumnSchema]);

const manifestSchema = z.object({
  format: z.literal(STORE_FORMAT),
  version: z.union([z.literal(1), z.literal(2)]),
  relations: z.record(z.string(), z.object({ rows: count, columns: z.array(columnSchema) })),
});

export type StoreManifest = z.infer<typeof manifestSchema>;
export type StoreFile = z.infer<typeof fileSchema>;
export type StoreColumn = z.infer<typeof storedColumnSchema>;
export type OmittedColumn = z.infer<typeof omittedColumnSchema>;
export const isOmitted = (c: StoreColumn | OmittedColumn): c is OmittedColumn => 'omitted' in c;
export type StoreDictionaryFiles = z.infer<typeof dictionarySchema>;

/** A user error about a store file. */
export const storeError = (message: string): VixenError => new VixenError(errorAt(message));

/** The manifest of the store in `dir`, checked: a corrupt one, or one of another format or version, is a VixenError naming it. */
export async function readStoreManifest(dir: string): Promise<StoreManifest> {
  const path = join(dir, STORE_MANIFEST);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw storeError(`cannot read store manifest ${path}: ${(e as Error).message}`);
  }
  const head = z.object({ format: z.string(), version: z.number() }).safeParse(json);
  if (!head.success || head.data.format !== STORE_FORMAT) throw storeError(`${path}: not a Vixen store manifest (expected "format": "${STORE_FORMAT}")`);
  if (!READ_VERSIONS.includes(head.data.version)) {
    throw storeError(`${path}: store version ${head.data.version} is not supported (this Vixen reads versions ${READ_VERSIONS.join(' and ')}; import the facts again with vixen import)`);
  }
  const r = manifestSchema.safeParse(json);
  if (!r.success) throw storeError(`${path}: corrupt store manifest: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return r.data;
}
