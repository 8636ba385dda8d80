/**
 * A host cache of parsed facts files, so that a Database reads each file once however many column sets
 * (pruneColumns) its programs keep: the first read of a file parses every column, and each program's relation is
 * then projected from those words (copied, with string ids moved to the run's interner) instead of parsing the
 * file again. Splitting a file into fields costs most of a parse whatever columns are kept, so parsing all of
 * them once is cheaper than parsing a few columns per program.
 */
import { VixenError, rowWords, type RelationDecl } from '@vixen/queryplan';
import { EncodedRelation, StringInterner, columnTypes, columnWordOffsets, factsColumns, type EncodedFacts } from './encoded.js';
import { loadKeptColumns, type FactsFileLoader } from './dir.js';
import { loadFactsFileInto } from './file.js';

interface CachedFile {
  /** Every column of the file, with ids of `strings`. */
  rows: EncodedRelation;
  strings: StringInterner;
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
      const rows = new EncodedRelation(columnTypes(columns));
      const strings = new StringInterner();
      this.reads++;
      try {
        await loadFactsFileInto(path, columns, rows, strings, decl.name);
        this.files.set(key, (file = { rows, strings }));
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
  const source = file.rows.types;
  const offsets = columnWordOffsets(source);
  const kept = decl.pruned?.loadColumns ?? source.map((_, i) => i);
  const from = kept.map((i) => ({ at: offsets[i]!, words: rowWords([source[i]!]), string: source[i] === 'string' }));
  const target = facts.relation(decl.name, columnTypes(decl.columns));
  // Cached string id -> the run's id, filled as strings are met.
  const ids = new Int32Array(file.strings.strings.length).fill(-1);
  for (const words of file.rows.pieces()) {
    for (let row = 0; row < words.length; row += file.rows.width) {
      const next = target.next();
      let out = next.at;
      for (const c of from) {
        const at = row + c.at;
        if (c.string) {
          const id = words[at]!;
          let to = ids[id]!;
          if (to < 0) ids[id] = to = facts.strings.id(file.strings.text(id));
          next.words[out++] = to;
        } else {
          for (let w = 0; w < c.words; w++) next.words[out++] = words[at + w]!;
        }
      }
      target.commit();
    }
  }
}
