/**
 * The manifest of a columnar store (`vixen-store.json`), checked with zod: the format and version first (so an
 * older or newer store is named as such), then every field. A store is a folder of column files, one per column per
 * relation, each in its encoding (column-encoding.ts: the device words of encoding.ts, or narrower), and a dictionary
 * per string column; the manifest gives each file's encoding, size and CRC-32, so a truncated, rewritten or corrupt
 * file is an error, never a wrong answer. README.md (Columnar store) describes the format.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { VixenError, errorAt, wordsOf, type ScalarType } from '@vixen/queryplan';
import { WORDS_ENCODING, type ColumnEncoding } from './column-encoding.js';

export const STORE_MANIFEST = 'vixen-store.json';
export const STORE_FORMAT = 'vixen-store';
/**
 * The store version written, 3: each column file has an encoding (narrow ones for most columns). Version 2 could omit
 * a column (`vixen import --columns read`; version 3 can too); versions 1 and 2 hold device words only, and are still
 * read. An older Vixen names a version 3 store as one it does not read.
 */
export const STORE_VERSION = 3;
/** Versions this Vixen reads. */
const READ_VERSIONS = [1, 2, 3];

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

const word = z.number().int().min(0).max(2 ** 32 - 1);
/** A column file's encoding (version 3; column-encoding.ts). */
const encodingSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('words') }).strict(),
  z.object({ kind: z.literal('frame'), width: z.literal([1, 2, 3, 4]), base: z.array(word), step: word.min(1) }).strict(),
]) satisfies z.ZodType<ColumnEncoding>;

/** A stored column, its encoding as the manifest's version has it: required from version 3, absent (words) before. */
const storedColumn = <E extends z.ZodTypeAny>(encoding: E) =>
  fileSchema
    // `omitted` only tells it from an omitted column, so that an error is named in the stored column's fields.
    .extend({ name: z.string(), type: z.enum(SCALAR_TYPES), encoding, dictionary: dictionarySchema.optional(), omitted: z.literal(false).optional() })
    .refine((c) => (c.type === 'string') === (c.dictionary !== undefined), 'expected a dictionary for a string column, and only for one')
    .refine((c) => {
      const e = (c as unknown as { encoding: ColumnEncoding }).encoding;
      return e.kind !== 'frame' || e.base.length === wordsOf(c.type);
    }, { message: 'expected as many base words as the type has words', path: ['encoding', 'base'] });
/** A column left out of the store (version 2 on): the program that imported it did not read it. */
const omittedColumnSchema = z.object({ name: z.string(), type: z.enum(SCALAR_TYPES), omitted: z.literal(true) }).strict();

const manifestOf = <E extends z.ZodTypeAny, V extends z.ZodTypeAny>(version: V, encoding: E) =>
  z.object({
    format: z.literal(STORE_FORMAT),
    version,
    relations: z.record(z.string(), z.object({ rows: count, columns: z.array(z.discriminatedUnion('omitted', [omittedColumnSchema, storedColumn(encoding)])) })),
  });
const manifestSchema = manifestOf(z.literal(STORE_VERSION), encodingSchema);
/** Versions 1 and 2: every file holds device words. */
const wordsManifestSchema = manifestOf(z.union([z.literal(1), z.literal(2)]), z.undefined().optional().transform((): ColumnEncoding => WORDS_ENCODING));

export type StoreManifest = z.infer<typeof manifestSchema> | z.infer<typeof wordsManifestSchema>;
export type StoreFile = z.infer<typeof fileSchema>;
export type StoreColumn = z.infer<ReturnType<typeof storedColumn<typeof encodingSchema>>>;
export type OmittedColumn = z.infer<typeof omittedColumnSchema>;
export const isOmitted = (c: StoreColumn | OmittedColumn): c is OmittedColumn => c.omitted === true;
export type StoreDictionaryFiles = z.infer<typeof dictionarySchema>;

/** A user error about a store file. */
export const storeError = (message: string): VixenError => new VixenError(errorAt(message));

/**
 * The last manifests read, by path, with their text: a run reads its store's manifest at every load, and checking it
 * again (zod) cost as much as opening the relation's files. A manifest whose text changed is read again.
 */
const lastRead = new Map<string, { text: string; manifest: StoreManifest }>();
const LAST_READ = 8;

/** The manifest of the store in `dir`, checked: a corrupt one, or one of another format or version, is a VixenError naming it. */
export async function readStoreManifest(dir: string): Promise<StoreManifest> {
  const path = join(dir, STORE_MANIFEST);
  let text: string;
  let json: unknown;
  try {
    text = await readFile(path, 'utf8');
    const last = lastRead.get(path);
    if (last?.text === text) return last.manifest;
    json = JSON.parse(text);
  } catch (e) {
    throw storeError(`cannot read store manifest ${path}: ${(e as Error).message}`);
  }
  const head = z.object({ format: z.string(), version: z.number() }).safeParse(json);
  if (!head.success || head.data.format !== STORE_FORMAT) throw storeError(`${path}: not a Vixen store manifest (expected "format": "${STORE_FORMAT}")`);
  if (!READ_VERSIONS.includes(head.data.version)) {
    throw storeError(`${path}: store version ${head.data.version} is not supported (this Vixen reads versions ${READ_VERSIONS.slice(0, -1).join(', ')} and ${READ_VERSIONS.at(-1)}; import the facts again with vixen import)`);
  }
  // An older store is read as one of this version whose files hold words.
  const r = head.data.version === STORE_VERSION ? manifestSchema.safeParse(json) : wordsManifestSchema.safeParse(json);
  if (!r.success) throw storeError(`${path}: corrupt store manifest: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  lastRead.delete(path);
  lastRead.set(path, { text, manifest: r.data });
  if (lastRead.size > LAST_READ) lastRead.delete(lastRead.keys().next().value!);
  return r.data;
}
