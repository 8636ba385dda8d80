/**
 * A host cache of parsed facts files, so that a Database reads each file once however many column sets
 * (pruneColumns) its programs keep: the first read of a file parses every column, and each program's relation is
 * then projected from those words (copied, with string ids moved to the run's interner) instead of parsing the
 * file again. Splitting a file into fields costs most of a parse whatever columns are kept, so parsing all of
 * them once is cheaper than parsing a few columns per program.
 */
import { VixenError, type ScalarType } from '@vixen/queryplan';
import { EncodedRelation, StringInterner, columnTypes, columnWordOffsets, factsColumns } from './encoded.js';
import { loadKeptColumns, type FactsFileLoader } from './dir.js';
import { isBinaryFactsFile, loadFactsFileInto } from './file.js';
import { parseFileInParts, type ParsedPart } from './parse-file.js';
import { stringColumnBits } from './parse-range.js';
import { projectParts } from './project.js';

interface CachedFile {
  /** Every column of the file. */
  types: readonly ScalarType[];
  /** The rows in parts (ranges of the file parsed apart), each with the string table its string words refer to. */
  parts: ParsedPart[];
}

export class FactsCache {
  /** By path and column types (another declaration of the same file parses it again). */
  private readonly files = new Map<string, CachedFile>();
  /** Files whose columns do not all parse as declared: they are read per program, kept columns only. */
  private readonly unparsable = new Set<string>();
  /** Facts files read so far. */
  reads = 0;

  /**
   * A FactsFileLoader that reads each text file at most once (twice where a column the program skips is bad). A
   * Parquet or Arrow file is read per program, only the columns it keeps: unlike a text file's, its columns are
   * decoded apart, so a program that keeps fewer does less work.
   */
  readonly load: FactsFileLoader = async (decl, path, facts) => {
    if (isBinaryFactsFile(path)) {
      this.reads++;
      return loadKeptColumns(decl, path, facts);
    }
    const columns = factsColumns(decl);
    const key = `${path}\0${columnTypes(columns).join(',')}`;
    let file = this.files.get(key);
    if (!file && !this.unparsable.has(key)) {
      const types = columnTypes(columns);
      this.reads++;
      try {
        let parts = await parseFileInParts(path, types);
        if (!parts) {
          // Not in the byte parser's simple forms: file.ts parses it, and says where any problem is.
          const rows = new EncodedRelation(types);
          const strings = new StringInterner();
          await loadFactsFileInto(path, columns, rows, strings, decl.name);
          parts = [{ pieces: rows.pieces(), strings, stringCount: strings.strings.length, columns: stringColumns(rows, strings.strings.length) }];
        }
        this.files.set(key, (file = { types, parts }));
      } catch (e) {
        if (!(e instanceof VixenError)) throw e;
        // Columns the program skips are never checked without the cache either: its own errors, or none, decide.
        this.unparsable.add(key);
      }
    }
    if (!file) {
      this.reads++;
      return loadKeptColumns(decl, path, facts);
    }
    await projectParts(file.parts, file.types, decl.pruned?.loadColumns ?? file.types.map((_, i) => i), decl, facts);
  };

  clear(): void {
    this.files.clear();
    this.unparsable.clear();
  }
}

/** InternedStrings.columns of rows loaded by file.ts: per string id, the string columns holding it. */
function stringColumns(rows: EncodedRelation, stringCount: number): Uint32Array {
  const out = new Uint32Array(stringCount);
  const offsets = columnWordOffsets(rows.types);
  const bits = stringColumnBits(rows.types);
  for (const words of rows.pieces()) {
    bits.forEach((bit, c) => {
      if (bit !== 0) for (let at = offsets[c]!; at < words.length; at += rows.width) out[words[at]!]! |= bit;
    });
  }
  return out;
}
