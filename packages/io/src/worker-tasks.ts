/** The worker tasks this package defines, for a worker entry that must hold them up front (the bundle's). */
import './facts/encoded.js';
import './facts/parse-range.js';
import './facts/project.js';
import './facts/parquet.js';
import './sorted-order.js';
import './store/files.js';
