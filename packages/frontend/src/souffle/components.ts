/**
 * Soufflé components, expanded at compile time as Soufflé does: `.init inst = Comp<A...>` copies the items of
 * `Comp` and of its bases (inherited rules of an `.override` relation dropped), with type parameters replaced by
 * the arguments and every relation and type the component declares renamed `inst.name`; names it does not
 * declare refer to the enclosing scope. Nested `.init`s become `inst.inner.name`, and nested `.comp`s are
 * visible inside the component that defines them. The result has no component items left.
 */
import { errorAt, formatSpan, type Diagnostic } from '@vixen/queryplan';
import type { Attribute, CompRef, Name, SAtom, SFormula, SItem, SouffleAst } from './ast.js';
import { mapArgs, mapAtoms } from './traverse.js';

type Comp = Extract<SItem, { kind: 'comp' }>;
type Init = Extract<SItem, { kind: 'init' }>;

/** Components visible at a point: the innermost definitions first. */
interface Scope {
  comps: Map<string, Comp>;
  parent?: Scope;
}

/** Deeper than this, inheritance or instantiation must be cyclic (Soufflé reports those too). */
const MAX_DEPTH = 64;

function lookup(scope: Scope | undefined, name: string): { comp: Comp; scope: Scope } | undefined {
  for (let s = scope; s; s = s.parent) {
    const comp = s.comps.get(name);
    if (comp) return { comp, scope: s };
  }
  return undefined;
}

function scopeOf(items: SItem[], parent: Scope | undefined, diagnostics: Diagnostic[]): Scope {
  const comps = new Map<string, Comp>();
  for (const item of items) {
    if (item.kind !== 'comp') continue;
    const prior = comps.get(item.name.name);
    if (prior) diagnostics.push(errorAt(`duplicate component ${item.name.name} (first defined at ${formatSpan(prior.name.span)})`, item.name.span));
    else comps.set(item.name.name, item);
  }
  return parent ? { comps, parent } : { comps };
}

class Expander {
  constructor(private readonly diagnostics: Diagnostic[]) {}

  private error(message: string, at: Name): undefined {
    this.diagnostics.push(errorAt(message, at.span));
    return undefined;
  }

  /** Top-level items with every `.init` replaced by its instance's items. */
  expand(items: SItem[], scope: Scope): SItem[] {
    return items.flatMap((item): SItem[] => {
      switch (item.kind) {
        case 'comp':
          return [];
        case 'init':
          return this.instance(item, scope, new Map(), '', (name) => name, 0);
        case 'override':
          this.error('.override is only meaningful inside a component', item.rel);
          return [];
        default:
          return [item];
      }
    });
  }

  /**
   * The items of `comp` and its bases, type parameters bound (`types`, in the caller's names), overridden
   * inherited clauses dropped; names still unqualified. Undefined after reporting a problem.
   */
  private members(ref: CompRef, scope: Scope, types: Map<string, string>, depth: number): { items: SItem[]; scope: Scope } | undefined {
    const found = lookup(scope, ref.name.name);
    if (!found) return this.error(`unknown component ${ref.name.name}`, ref.name);
    const { comp } = found;
    if (depth > MAX_DEPTH) return this.error(`component ${ref.name.name} inherits or instantiates itself`, ref.name);
    if (comp.params.length !== ref.args.length) {
      return this.error(`component ${comp.name.name} takes ${comp.params.length} type parameter(s), found ${ref.args.length}`, ref.name);
    }
    const binding = new Map(comp.params.map((p, i) => [p.name, types.get(ref.args[i]!.name) ?? ref.args[i]!.name]));
    const inner = scopeOf(comp.items, found.scope, this.diagnostics);
    const overridden = new Set(comp.items.flatMap((i) => (i.kind === 'override' ? [i.rel.name] : [])));
    const inherited: SItem[] = [];
    for (const base of comp.bases) {
      const members = this.members(base, found.scope, binding, depth + 1);
      if (!members) return undefined;
      inherited.push(...members.items.filter((i) => !definesOnly(i, overridden)));
    }
    const own = comp.items.filter((i) => i.kind !== 'comp' && i.kind !== 'override').map((i) => (i.kind === 'init' ? i : substituteTypes(i, binding)));
    // Inits keep the bindings they were written under: their component (a parameter may name one, as in
    // `.init impl = T`) and type arguments are resolved here.
    const bound = (n: Name): Name => ({ ...n, name: binding.get(n.name) ?? n.name });
    const inits = own.map((i) => (i.kind === 'init' ? { ...i, comp: { name: bound(i.comp.name), args: i.comp.args.map(bound) } } : i));
    return { items: [...inherited, ...inits], scope: inner };
  }

  /**
   * An instance's items, every name it declares qualified with `prefix` (which ends with its own name); other
   * names are resolved as the enclosing instance resolves them (`outerRel`), as Soufflé looks them up outwards.
   */
  private instance(init: Init, scope: Scope, types: Map<string, string>, outer: string, outerRel: Renamer, depth: number): SItem[] {
    const members = this.members(init.comp, scope, types, depth);
    if (!members) return [];
    const prefix = `${outer}${init.name.name}.`;
    const relations = new Set(members.items.flatMap((i) => (i.kind === 'decl' ? [i.rel.name] : [])));
    const localTypes = new Set(members.items.flatMap((i) => (i.kind === 'type' ? [i.name.name] : [])));
    const instances = new Set(members.items.flatMap((i) => (i.kind === 'init' ? [i.name.name] : [])));
    const rel = (name: string): string => (relations.has(name) || instances.has(name.split('.')[0]!) ? prefix + name : outerRel(name));
    const type = (name: string): string => (localTypes.has(name) ? prefix + name : name);
    return members.items.flatMap((item): SItem[] => {
      if (item.kind === 'init') return this.instance(item, members.scope, new Map(), prefix, rel, depth + 1);
      return [rename(item, rel, type)];
    });
  }
}

/** Whether `item` is a clause of an overridden relation (facts and rules with such heads go; others stay). */
function definesOnly(item: SItem, overridden: ReadonlySet<string>): boolean {
  if (item.kind === 'fact') return overridden.has(item.atom.rel);
  if (item.kind === 'rule') return item.heads.every((h) => overridden.has(h.rel));
  return false;
}

function substituteTypes(item: SItem, binding: ReadonlyMap<string, string>): SItem {
  if (item.kind !== 'decl' && item.kind !== 'type') return item;
  const sub = (n: Name): Name => ({ ...n, name: binding.get(n.name) ?? n.name });
  if (item.kind === 'type') return renameTypeItem(item, sub);
  return { ...item, attributes: item.attributes.map((a) => ({ ...a, type: sub(a.type) })) };
}

/** A `.type` item with the type names it uses renamed: alternatives, and record and branch field types. */
function renameTypeItem(item: Extract<SItem, { kind: 'type' }>, sub: (n: Name) => Name): Extract<SItem, { kind: 'type' }> {
  const fields = (fs: Attribute[]): Attribute[] => fs.map((f) => ({ ...f, type: sub(f.type) }));
  return {
    ...item,
    alternatives: item.alternatives.map(sub),
    ...(item.record ? { record: fields(item.record) } : {}),
    ...(item.branches ? { branches: item.branches.map((b) => ({ ...b, fields: fields(b.fields) })) } : {}),
  };
}

type Renamer = (name: string) => string;

function rename(item: SItem, rel: Renamer, type: Renamer): SItem {
  const name = (n: Name, f: Renamer): Name => ({ ...n, name: f(n.name) });
  switch (item.kind) {
    case 'decl':
      return { ...item, rel: name(item.rel, rel), attributes: item.attributes.map((a) => ({ ...a, type: name(a.type, type) })) };
    case 'io':
      return { ...item, targets: item.targets.map((t) => ({ ...t, rel: name(t.rel, rel) })) };
    case 'type':
      return { ...renameTypeItem(item, (a) => name(a, type)), name: name(item.name, type) };
    case 'fact':
      return { ...item, atom: renameAtom(item.atom, rel) };
    case 'rule':
      return { ...item, heads: item.heads.map((h) => renameAtom(h, rel)), body: renameFormula(item.body, rel) };
    case 'subsume':
      return { ...item, rel: name(item.rel, rel) };
    case 'comp':
    case 'init':
    case 'override':
      return item;
  }
}

function renameAtom(a: SAtom, rel: Renamer): SAtom {
  return { ...mapArgs(a, (inner) => renameAtom(inner, rel)), rel: rel(a.rel) };
}

function renameFormula(f: SFormula, rel: Renamer): SFormula {
  return mapAtoms(f, (a) => ({ ...a, rel: rel(a.rel) }));
}

/** The program's files with components expanded; components may be defined in one file and used in another. */
export function expandComponents(asts: SouffleAst[], diagnostics: Diagnostic[]): SouffleAst[] {
  const scope = scopeOf(
    asts.flatMap((a) => a.items),
    undefined,
    diagnostics,
  );
  const expander = new Expander(diagnostics);
  return asts.map((ast) => ({ ...ast, items: expander.expand(ast.items, scope) }));
}
