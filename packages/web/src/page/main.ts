/**
 * The playground page: an editor with the front end's diagnostics as you type, facts typed in or dropped, Run on
 * the page's WebGPU, and the compiler's views (query plan, kernel IR, WGSL per kernel, the DOT graphs, the kernel
 * profile). Everything runs in the page: the same compiler and executor as the CLI, on `navigator.gpu`.
 */
import { EditorState, Compartment } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { linter, lintGutter, forceLinting, type Diagnostic as EditorDiagnostic } from '@codemirror/lint';
import { instance as vizInstance } from '@viz-js/viz';
import { kirToDot, printKir } from '@vixen/kernel-ir';
import { formatValue, planToDot, printPlan, renderDiagnostics, VixenError, type Diagnostic, type Row } from '@vixen/queryplan';
import { parquetRowCount, parquetRows, souffleRecordView } from '@vixen/io';
import { compile, openBrowserGpu, type Gpu, type Program, type RunResult } from '@vixen/runtime';
import { GALLERY, type GalleryProgram } from '../gallery.js';
import { factsFileRelation, parquetFileRelation, parseFacts } from '../facts.js';
import { logiql, souffle } from './highlight.js';

const PAGE_ROWS = 50;
/** Facts text past this many characters is shown in part, read-only. */
const LARGE_FACTS = 200_000;
const PREVIEW_LINES = 20;

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** Facts text (typed, pasted, or a dropped text file), or a dropped Parquet file's bytes and row count. */
type FactsEntry = { file: string; text: string } | { file: string; parquet: ArrayBuffer; rows: number };

/** What the page shows and the browser test reads (window.vixenPlayground). */
interface PlaygroundState {
  program: string;
  status: 'idle' | 'running' | 'done' | 'error';
  error?: string;
  adapter?: string;
  milliseconds?: number;
  /** Each output relation's rows as the tables show them (formatValue per column type). */
  relations?: Record<string, string[][]>;
}

const state: PlaygroundState = { program: '', status: 'idle' };
let facts: FactsEntry[] = [];
let file = 'program.logic';
let outputs: readonly string[] | undefined;
let compiled: Program | undefined;
let gpuPromise: Promise<Gpu> | undefined;
const language = new Compartment();

// ---- the editor and its diagnostics ----

/** The front end's (and the compiler's) diagnostics of the editor's text, as CodeMirror's. */
function diagnose(view: EditorView): EditorDiagnostic[] {
  const text = view.state.doc.toString();
  const found: Diagnostic[] = [];
  try {
    compiled = compile([{ path: file, text }], { onWarnings: (w) => found.push(...w), ...(outputs ? { outputs } : {}) });
  } catch (e) {
    compiled = undefined;
    if (!(e instanceof VixenError)) throw e;
    found.push(...e.diagnostics);
  }
  const out = found.map((d): EditorDiagnostic => {
    const from = Math.min(d.span?.start.offset ?? 0, text.length);
    const to = Math.max(from, Math.min(d.span?.end.offset ?? from, text.length));
    return { from, to: to === from ? Math.min(from + 1, text.length) : to, severity: d.severity === 'note' ? 'info' : d.severity, message: d.message };
  });
  // The messages in words too, each at its line and column (the editor marks the places).
  $('diagnostics').textContent =
    found.length === 0 ? 'no errors' : found.map((d) => `${d.span ? `${d.span.start.line}:${d.span.start.column}: ` : ''}${d.severity}: ${d.message}`).join('\n');
  $('diagnostics').dataset.errors = String(found.filter((d) => d.severity === 'error').length);
  if (compiled) showCompilerViews(compiled);
  return out;
}

const editor = new EditorView({
  parent: $('editor'),
  state: EditorState.create({
    doc: '',
    extensions: [
      lineNumbers(),
      history(),
      highlightActiveLine(),
      bracketMatching(),
      keymap.of([...defaultKeymap, ...historyKeymap, { key: 'Mod-Enter', run: () => (void run(), true) }]),
      syntaxHighlighting(defaultHighlightStyle),
      language.of(logiql),
      lintGutter(),
      linter(diagnose, { delay: 250 }),
    ],
  }),
});

function setProgram(name: string, source: string, newFile: string): void {
  file = newFile;
  state.program = name;
  editor.dispatch({
    changes: { from: 0, to: editor.state.doc.length, insert: source },
    effects: language.reconfigure(file.endsWith('.dl') ? souffle : logiql),
  });
  forceLinting(editor);
}

// ---- facts ----

function renderFacts(): void {
  const list = $('facts');
  list.replaceChildren(
    ...facts.map((f, i) => {
      const box = document.createElement('div');
      box.className = 'facts-entry';
      const name = document.createElement('input');
      name.value = f.file;
      const remove = document.createElement('button');
      remove.textContent = 'remove';
      remove.onclick = () => {
        facts.splice(i, 1);
        renderFacts();
      };
      const count = document.createElement('span');
      count.className = 'muted';
      if ('parquet' in f) {
        // Its name says its format: renaming it to text would not make it text.
        name.readOnly = true;
        count.textContent = `Parquet, ${f.rows} row${f.rows === 1 ? '' : 's'}`;
        box.append(name, count, remove);
        return box;
      }
      name.title = '<relation>.csv, .tsv, .facts or .tbl';
      name.oninput = () => (f.file = name.value);
      const text = document.createElement('textarea');
      const lines = f.text.split('\n').filter((l) => l.length > 0).length;
      // Megabytes of generated or dropped facts would make the editor crawl: show their start, read-only.
      const large = f.text.length > LARGE_FACTS;
      text.value = large ? `${f.text.split('\n', PREVIEW_LINES).join('\n')}\n... (${lines} lines in all, shown in part)` : f.text;
      text.readOnly = large;
      text.rows = 4;
      text.spellcheck = false;
      text.oninput = () => (f.text = text.value);
      count.textContent = `${lines} line${lines === 1 ? '' : 's'}`;
      box.append(name, count, remove, text);
      return box;
    }),
  );
}

async function addDroppedFiles(files: FileList): Promise<void> {
  for (const f of Array.from(files)) {
    if (/\.(arrow|feather)$/i.test(f.name)) {
      showError(`${f.name}: Arrow files are read by the io package's reader, which uses Node's files; the page takes Parquet files and CSV, TSV, .facts and .tbl text`);
      continue;
    }
    if (parquetFileRelation(f.name)) {
      const parquet = await f.arrayBuffer();
      try {
        // Its metadata only: the rows are decoded at Run, against the program's declaration then.
        const rows = await parquetRowCount(f.name, parquet);
        facts = [...facts.filter((e) => e.file !== f.name), { file: f.name, parquet, rows }];
      } catch (e) {
        showError(errorText(e));
      }
      continue;
    }
    if (/\.(logic|dl)$/i.test(f.name)) {
      outputs = undefined;
      setProgram(f.name, await f.text(), f.name);
      continue;
    }
    if (!factsFileRelation(f.name)) {
      showError(`${f.name}: facts files are named <relation>.csv, .tsv, .facts or .tbl`);
      continue;
    }
    facts = [...facts.filter((e) => e.file !== f.name), { file: f.name, text: await f.text() }];
  }
  renderFacts();
}

// ---- views ----

function showCompilerViews(p: Program): void {
  $('view-plan').textContent = p.plan ? printPlan(p.plan) : '';
  $('view-kir').textContent = printKir(p.kir);
  const select = $<HTMLSelectElement>('wgsl-kernel');
  const kept = select.value;
  select.replaceChildren(
    ...p.shaders.map((passes, k) => {
      const o = document.createElement('option');
      o.value = String(k);
      o.textContent = `k${k}: ${Object.keys(passes).join(', ')}`;
      return o;
    }),
  );
  if (kept && Number(kept) < p.shaders.length) select.value = kept;
  showWgsl();
  if (activeView() === 'graph') void showGraph();
}

function showWgsl(): void {
  const k = Number($<HTMLSelectElement>('wgsl-kernel').value || 0);
  const passes = compiled?.shaders[k] ?? {};
  $('view-wgsl').textContent = Object.entries(passes)
    .map(([pass, wgsl]) => `// ---- kernel k${k}, pass ${pass} ----\n${wgsl}`)
    .join('\n');
}

const viz = vizInstance();

async function showGraph(): Promise<void> {
  if (!compiled) return;
  const which = $<HTMLSelectElement>('graph-which').value;
  const dot = which === 'plan' && compiled.plan ? planToDot(compiled.plan) : kirToDot(compiled.kir);
  const target = $('view-graph');
  try {
    target.replaceChildren((await viz).renderSVGElement(dot));
  } catch (e) {
    // Graphviz failing to load is no reason to hide the graph: show its DOT text.
    const pre = document.createElement('pre');
    pre.textContent = `${e instanceof Error ? e.message : String(e)}\n\n${dot}`;
    target.replaceChildren(pre);
  }
}

function activeView(): string {
  return document.querySelector<HTMLElement>('.tab.active')?.dataset.view ?? 'results';
}

function selectView(view: string): void {
  for (const t of document.querySelectorAll<HTMLElement>('.tab')) t.classList.toggle('active', t.dataset.view === view);
  for (const v of document.querySelectorAll<HTMLElement>('.view')) v.hidden = v.id !== `pane-${view}`;
  if (view === 'graph') void showGraph();
}

// ---- running ----

/** A VixenError's rendered diagnostics, or another error's message. */
function errorText(e: unknown): string {
  return e instanceof VixenError ? renderDiagnostics(e.diagnostics, e.sources) : e instanceof Error ? e.message : String(e);
}

function showError(message: string): void {
  const box = $('error');
  box.textContent = message;
  box.hidden = false;
}

function setStatus(s: PlaygroundState['status'], text: string): void {
  state.status = s;
  const el = $('status');
  el.textContent = text;
  el.dataset.state = s;
}

function gpu(): Promise<Gpu> {
  gpuPromise ??= openBrowserGpu();
  gpuPromise.catch(() => (gpuPromise = undefined));
  return gpuPromise;
}

/** API rows of the facts entries whose relation the program declares; the others are named as an error. */
async function factRows(p: Program): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const f of facts) {
    const relation = 'parquet' in f ? parquetFileRelation(f.file) : factsFileRelation(f.file)?.relation;
    const rel = relation !== undefined ? p.relations.find((r) => r.name === relation && r.kind === 'edb') : undefined;
    if (!rel) throw new VixenError({ severity: 'error', message: `${f.file}: the program has no base relation ${relation ?? f.file}` });
    out[rel.name] = [...(out[rel.name] ?? []), ...('parquet' in f ? await parquetRows(f.file, f.parquet, rel) : parseFacts(f.file, f.text, rel))];
  }
  return out;
}

async function run(): Promise<void> {
  $('error').hidden = true;
  const text = editor.state.doc.toString();
  setStatus('running', 'compiling...');
  try {
    const p = compile([{ path: file, text }], outputs ? { outputs } : {});
    compiled = p;
    showCompilerViews(p);
    const rows = await factRows(p);
    setStatus('running', 'running on WebGPU...');
    const device = await gpu();
    const start = performance.now();
    const result = await p.run({ gpu: device, facts: rows, profile: $<HTMLInputElement>('profile').checked });
    const ms = performance.now() - start;
    showResults(p, result, ms);
    showProfile(result);
    state.adapter = result.adapter;
    state.milliseconds = ms;
    setStatus('done', `${ms.toFixed(1)} ms on ${result.adapter}`);
  } catch (e) {
    const message = errorText(e);
    state.error = message;
    showError(message);
    setStatus('error', 'failed');
  }
}

function showResults(p: Program, result: RunResult, ms: number): void {
  const relations: Record<string, string[][]> = {};
  const sections = [...result.tables].map(([name, table]) => {
    // A Soufflé relation with records shows each record attribute as one column of Soufflé's text.
    const layout = p.souffleIo?.records?.[name];
    const flat = p.relations.find((r) => r.name === name)!;
    const view = layout ? souffleRecordView(flat, layout) : undefined;
    const decl = view?.decl ?? flat;
    const rows = table.rows().map((row) => (view ? view.row(row) : row).map((v, c) => formatValue(v, decl.columns[c]?.type)));
    relations[name] = rows;
    return resultSection(name, decl.columns.map((c) => c.name), rows);
  });
  const violations = result.violations.map((v) => {
    const div = document.createElement('div');
    div.className = 'error';
    div.textContent = JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
    return div;
  });
  const summary = document.createElement('p');
  summary.className = 'summary';
  summary.textContent = `${[...result.tables].map(([n, t]) => `${n}: ${t.rows().length}`).join(', ')} · ${ms.toFixed(1)} ms · ${result.stats.launches} kernel launches · ${result.adapter}`;
  $('view-results').replaceChildren(summary, ...violations, ...sections);
  state.relations = relations;
}

function resultSection(name: string, columns: string[], rows: string[][]): HTMLElement {
  const section = document.createElement('section');
  section.className = 'relation';
  section.dataset.relation = name;
  const title = document.createElement('h3');
  title.innerHTML = `${name} <span class="count">${rows.length} row${rows.length === 1 ? '' : 's'}</span>`;
  const table = document.createElement('table');
  const pager = document.createElement('div');
  pager.className = 'pager';
  let page = 0;
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
  const draw = (): void => {
    const head = `<tr>${columns.map((c) => `<th>${escape(c)}</th>`).join('')}</tr>`;
    const body = rows
      .slice(page * PAGE_ROWS, (page + 1) * PAGE_ROWS)
      .map((r) => `<tr>${r.map((v) => `<td>${escape(v)}</td>`).join('')}</tr>`)
      .join('');
    table.innerHTML = `<thead>${head}</thead><tbody>${body}</tbody>`;
    pager.hidden = pages === 1;
    pager.querySelector('span')!.textContent = `page ${page + 1} of ${pages}`;
  };
  const button = (label: string, step: number): HTMLButtonElement => {
    const b = document.createElement('button');
    b.textContent = label;
    b.onclick = () => {
      page = Math.min(pages - 1, Math.max(0, page + step));
      draw();
    };
    return b;
  };
  pager.append(button('previous', -1), document.createElement('span'), button('next', 1));
  draw();
  section.append(title, table, pager);
  return section;
}

function escape(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

function showProfile(result: RunResult): void {
  const kernels = result.stats.kernels.filter((k) => k.launches > 0);
  if (kernels.length === 0 || !$<HTMLInputElement>('profile').checked) {
    $('view-profile').textContent = 'Run with "profile kernels" on to see each kernel\'s time.';
    return;
  }
  const max = Math.max(...kernels.map((k) => k.milliseconds), 1e-9);
  const rows = [...kernels]
    .sort((a, b) => b.milliseconds - a.milliseconds)
    .map((k) => {
      const rules = (k.rules ?? []).map((r) => r.text ?? '').filter((t) => t.length > 0).join('; ');
      return `<tr><td>k${k.kernel}</td><td>${k.kind}</td><td class="num">${k.launches}</td><td class="num">${k.milliseconds.toFixed(2)}</td>` +
        `<td class="bar"><div style="width:${((100 * k.milliseconds) / max).toFixed(1)}%"></div></td>` +
        `<td class="num">${k.rowsIn}</td><td class="num">${k.rowsOut}</td><td class="rules">${escape(rules)}</td></tr>`;
    })
    .join('');
  $('view-profile').innerHTML =
    `<p class="summary">${result.stats.launches} launches, ${result.stats.milliseconds.toFixed(1)} ms; kernel times are ` +
    `${kernels.some((k) => k.milliseconds !== k.wallMilliseconds) ? 'GPU timestamps' : 'host times up to the device\'s completion'}</p>` +
    `<table><thead><tr><th>kernel</th><th>kind</th><th>launches</th><th>ms</th><th></th><th>rows in</th><th>rows out</th><th>rules</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// ---- the page ----

function loadGallery(g: GalleryProgram): void {
  outputs = g.outputs;
  $('view-results').textContent = 'Press Run.';
  $('view-profile').textContent = "Run to see each kernel's time.";
  $('error').hidden = true;
  setStatus('idle', '');
  facts = Object.entries(g.facts).map(([f, text]) => ({ file: f, text }));
  renderFacts();
  setProgram(g.name, g.source, g.file);
}

function start(): void {
  const select = $<HTMLSelectElement>('gallery');
  select.replaceChildren(
    ...GALLERY.map((g, i) => {
      const o = document.createElement('option');
      o.value = String(i);
      o.textContent = g.name;
      return o;
    }),
  );
  select.onchange = () => loadGallery(GALLERY[Number(select.value)]!);
  $('run').onclick = () => void run();
  $('add-facts').onclick = () => {
    facts.push({ file: `relation${facts.length + 1}.csv`, text: '' });
    renderFacts();
  };
  $<HTMLSelectElement>('wgsl-kernel').onchange = showWgsl;
  $<HTMLSelectElement>('graph-which').onchange = () => void showGraph();
  for (const t of document.querySelectorAll<HTMLElement>('.tab')) t.onclick = () => selectView(t.dataset.view!);
  document.body.addEventListener('dragover', (e) => e.preventDefault());
  document.body.addEventListener('drop', (e) => {
    e.preventDefault();
    if (e.dataTransfer?.files.length) void addDroppedFiles(e.dataTransfer.files);
  });
  $<HTMLInputElement>('file-input').onchange = (e) => {
    const files = (e.target as HTMLInputElement).files;
    if (files) void addDroppedFiles(files);
  };
  // The device is opened up front: a browser without WebGPU, or whose WebGPU offers no adapter, is told so at once.
  gpu().then(
    (device) => setStatus('idle', `ready: ${device.adapterName}`),
    (e: unknown) => {
      $('no-webgpu-reason').textContent = e instanceof Error ? e.message : String(e);
      $('no-webgpu').hidden = false;
      $<HTMLButtonElement>('run').disabled = true;
    },
  );
  selectView('results');
  loadGallery(GALLERY[0]!);
}

declare global {
  interface Window {
    vixenPlayground: { state: PlaygroundState; gallery: readonly GalleryProgram[]; load(index: number): void; run(): Promise<void> };
  }
}

window.vixenPlayground = {
  state,
  gallery: GALLERY,
  load: (i) => {
    $<HTMLSelectElement>('gallery').value = String(i);
    loadGallery(GALLERY[i]!);
  },
  run,
};
start();
