/**
 * The package as a browser build sees it (package.json's `browser` condition): what needs no files and no worker
 * threads, the word encoding and facts given as rows, and the worker pool's interface running tasks in turn.
 * Node resolves index.ts. Bundling the browser entry (packages/web/test/browser-bundle.test.ts) fails on any name
 * a browser-bound module imports that is missing here.
 */
export { asciiCount, asciiEnd, decodeRow, dictionaryRun, encodeRows, encodeValue, sortDistinct, StringDictionary, type AsciiStrings, type SortedStrings, type StringIds } from './encoding.js';
export { EncodedFacts, EncodedRelation, StringInterner, columnTypes, factsColumns, stringWordOffsets, type DeviceRows } from './facts/encoded.js';
export { addApiFacts, addInlineFacts, type ColumnFacts, type FactColumn, type FactRelation } from './facts/rows.js';
export { convert, quoted } from './facts/convert.js';
export type { FactSources } from './sources.js';
export { defineTask, type Task } from './parallel/tasks.js';
export { runAllInWorkers, runInWorker, workerCount } from './parallel/pool-inline.js';
export { parquetRowCount, parquetRows } from './facts/parquet-decode.js';
export { souffleRecordView } from './souffle-values.js';
export { compareBytes, PARALLEL_STRINGS, sortedOrder, sortedOrderTask } from './sorted-order.js';
export { grow } from './facts/byte-strings.js';
export { concatWords } from './words.js';
