/**
 * A host cache of parsed facts files, so that a Database reads each file once however many column sets
 * (pruneColumns) its programs keep: the first read of a file parses every column, and each program's relation is
 * then projected from those words (copied, with string ids moved to the run's interner) instead of parsing the
 * file again. Splitting a file into fields costs most of a parse whatever columns are kept, so parsing all of
 * them once is cheaper than parsing a few columns per program.
 */
import { VixenError, rowWords, type RelationDecl, type ScalarType } from '@vixen/queryplan';
import { EncodedRelation, StringInterner, columnTypes, columnWordOffsets, factsColumns, type EncodedFacts } from './encoded.js';
import { loadKeptColumns, type FactsFileLoader } from './dir.js';
import { loadFactsFileInto } from './file.js';
import { parseFileInParts, type ParsedPart } from './parse-file.js';

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

  /** A FactsFileLoader that reads each file at most once (twice where a column the program skips is bad). */
  readonly load: FactsFileLoader = async (decl, path, facts) => {
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
          parts = [{ pieces: rows.pieces(), strings, stringCount: strings.strings.length }];
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
    project(file, decl, facts);
  };

  clear(): void {
    this.files.clear();
    this.unparsable.clear();
  }
}

/** Appends `decl`'s kept columns of `file`'s rows to its relation in `facts`. */
function project(file: CachedFile, decl: RelationDecl, facts: EncodedFacts): void {
  const source = file.types;
  const width = rowWords(source);
  const offsets = columnWordOffsets(source);
  const kept = decl.pruned?.loadColumns ?? source.map((_, i) => i);
  // Per word of an output row: the source word it copies, and whether it is a string id to map.
  const fromList: number[] = [];
  const stringList: number[] = [];
  for (const c of kept) {
    for (let w = 0; w < rowWords([source[c]!]); w++) {
      fromList.push(offsets[c]! + w);
      stringList.push(source[c] === 'string' ? 1 : 0);
    }
  }
  const from = Int32Array.from(fromList);
  const isString = Uint8Array.from(stringList);
  const target = facts.relation(decl.name, columnTypes(decl.columns));
  const outWidth = from.length;
  for (const part of file.parts) {
    // The part's string id -> the run's id, filled as strings are met.
    const ids = new Int32Array(part.stringCount).fill(-1);
    for (const words of part.pieces) {
      // Row by row, so each source row is read once (rows are wider than the kept words).
      const out = new Uint32Array((words.length / width) * outWidth);
      for (let at = 0, o = 0; at < words.length; at += width) {
        for (let k = 0; k < outWidth; k++, o++) {
          const v = words[at + from[k]!]!;
          if (isString[k] === 0) {
            out[o] = v;
            continue;
          }
          let id = ids[v]!;
          if (id < 0) ids[v] = id = facts.strings.id(part.strings.text(v));
          out[o] = id;
        }
      }
      target.adopt(out);
    }
  }
}
