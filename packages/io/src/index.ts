/**
 * Facts in and results out: the word encoding of values, readers of facts files and columnar stores into encoded columns, the
 * sources a run's facts come from, writers of output files, and the worker pool that host-side work scales on.
 */
export { asciiCount, asciiEnd, decodeRow, dictionaryRun, encodeRows, encodeValue, sortDistinct, StringDictionary, type AsciiStrings, type DictionaryBytes, type SortedStrings, type StringIds } from './encoding.js';
export { asciiList, ByteStringSort, byteSortTimes, sortByteStrings, warmByteSortWorkers, type ByteSorter } from './sort-byte-strings.js';
export { compareBytes, PARALLEL_STRINGS, sortedOrder, sortedOrderTask, type ByteStrings } from './sorted-order.js';
export { MAX_DISTINCT_STRINGS, StringMap } from './string-map.js';
export {
  ByteInterner,
  grow,
  columnTypes,
  distinctAscending,
  EncodedFacts,
  EncodedRelation,
  FACTS_EXTENSIONS,
  FactsCache,
  factsColumns,
  factsFormat,
  loadEach,
  loadFactsDir,
  loadFactsDirInto,
  loadFactsFile,
  loadFactsFileInto,
  loadKeptColumns,
  StringInterner,
  stringWordOffsets,
  type DeviceRows,
  type FactsFileLoader,
  type Format,
} from './facts/index.js';
export { externalFacts, type FactSources } from './sources.js';
export { addApiFacts, addInlineFacts, type ColumnFacts, type FactColumn, type FactRelation } from './facts/rows.js';
export { convert, quoted } from './facts/convert.js';
export { parquetRowCount, parquetRows } from './facts/parquet-decode.js';
export { parquetLoadTimes } from './facts/parquet.js';
export type { LoadProgress, LoadProgressListener } from './load-progress.js';
export { importStore, type ImportedStore, type ImportStoreOptions } from './store/import.js';
export { StoreDictionary } from './store/dictionary.js';
export { StoreFileReader } from './store/files.js';
export type { StoreDeviceLoader, StoreRelationRead } from './store/load.js';
export { STORE_MANIFEST, storeError, type StoreColumn } from './store/manifest.js';
export { bytesPerValue, type ColumnEncoding } from './store/column-encoding.js';
export { writeFilesAtomically, writeLines, type OutputFile } from './output-files.js';
export { souffleLines, writeSouffleOutputs } from './souffle-output.js';
export { formatSouffleFloat, souffleRecordView } from './souffle-values.js';
export { firstInvalidUtf8, readTextFile, watchUtf8 } from './utf8.js';
export { readExactly } from './read-exactly.js';
export { concatWords } from './words.js';
export { runAllInWorkers, runInWorker, workerCount } from './parallel/pool.js';
export { defineTask, type Task } from './parallel/tasks.js';
export { locateFileFacts } from './facts/locate.js';
