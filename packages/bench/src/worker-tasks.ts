/** The worker tasks this package defines, for a worker entry that must hold them up front (the bundle's). */
import './tpch/dbgen.js';
import './ssb/dbgen.js';
import './graphs/generators.js';
import './graphs/graph.js';
