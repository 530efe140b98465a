//! `lockstep-split`: splits one of the page's WebAssembly bundles in two, the part its first
//! view runs (the primary module, fetched before the view shows) and the rest (the secondary
//! module, fetched once the view is ready), so that a reader waits only for what the first
//! screen needs. The site's build runs it after `wasm-opt` (`scripts/csp-hook.mjs`); the split is
//! decided by a profile, the names of the functions a first view ran, that
//! `scripts/split-profile.mjs` records in a real browser and the repository keeps.
//!
//! How the halves work together, as binaryen's `wasm-split` does it: every function the
//! primary keeps calls a moved one through the module's function table, whose slot holds a
//! placeholder, an import the page's glue answers (`scripts/split-glue.js`). The first call
//! of a placeholder, if the secondary has not arrived yet, loads it at once; instantiating the
//! secondary writes the real functions into their slots, so every later call goes straight to
//! them. The secondary imports the primary's memory, tables, globals and the functions it calls.
//! A function missing from the profile is only slower the first time, never wrong.
//!
//! Usage:
//!   lockstep-split instrument IN.wasm OUT.wasm    every function reports its first run
//!   lockstep-split names IN.wasm HITS             the profile of the function indices in HITS
//!   lockstep-split split IN.wasm PROFILE PRIMARY.wasm SECONDARY.wasm
//!   lockstep-split strip IN.wasm OUT.wasm         the module without its names
//!
//! Natively only; its wasm32 build is an empty stub.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(native::main());
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
    use walrus::ir::{
        dfs_in_order, dfs_pre_order_mut, Call, CallIndirect, Const, GlobalGet, IfElse, Instr,
        InstrLocId, InstrSeq, UnaryOp, Unop, Value, Visitor, VisitorMut,
    };
    use walrus::{
        ConstExpr, ElementItems, ElementKind, ExportItem, FunctionId, FunctionKind, GlobalKind,
        ImportKind, ImportedFunction, Module, ModuleConfig, TableId, TypeId, ValType,
    };

    /// The import namespace of the primary's placeholders, named by their table slot.
    pub const PLACEHOLDER: &str = "__split_placeholder";
    /// The namespace from which the secondary imports what it uses of the primary.
    pub const PRIMARY: &str = "__split_primary";
    /// The namespace of an instrumented module's report: `hit(function index)`.
    pub const PROFILE: &str = "__split_profile";
    /// The primary's export of the function table, through which the glue calls a slot.
    pub const TABLE_EXPORT: &str = "__split_table";

    type Result<T> = std::result::Result<T, String>;

    pub fn main() -> i32 {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let done = match argv.as_slice() {
            ["instrument", input, output] => instrument(input, output),
            ["names", input, hits] => names(input, hits),
            ["split", input, profile, primary, secondary] => {
                split(input, profile, primary, secondary)
            }
            ["strip", input, output] => {
                read(input, false).and_then(|mut m| write(&mut m, output))
            }
            _ => Err("usage: lockstep-split instrument IN OUT | names IN HITS | split IN PROFILE PRIMARY SECONDARY | strip IN OUT".into()),
        };
        match done {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("lockstep-split: {e}");
                1
            }
        }
    }

    /// Reads a module; `names` says whether what is written from it keeps its function names.
    fn read(path: &str, names: bool) -> Result<Module> {
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        ModuleConfig::new()
            .generate_name_section(names)
            .generate_producers_section(false)
            .parse(&bytes)
            .map_err(|e| format!("{path}: {e}"))
    }

    fn write(m: &mut Module, path: &str) -> Result<()> {
        std::fs::write(path, m.emit_wasm()).map_err(|e| format!("{path}: {e}"))
    }

    /// Every function reports its own index (its index in IN) to `__split_profile.hit` the
    /// first time it runs, and never again: a flag of its own (a global) says it has. A report
    /// at every call would slow the page enough to change the order in which its work
    /// interleaves, and with it what runs.
    fn instrument(input: &str, output: &str) -> Result<()> {
        let mut m = read(input, true)?;
        let ty = m.types.add(&[ValType::I32], &[]);
        let (hit, _) = m.add_import_func(PROFILE, "hit", ty);
        let ids: Vec<FunctionId> = m.funcs.iter_local().map(|(id, _)| id).collect();
        for id in ids {
            let index = i32::try_from(id.index()).map_err(|_| "too many functions")?;
            let seen =
                m.globals
                    .add_local(ValType::I32, true, false, ConstExpr::Value(Value::I32(0)));
            if let FunctionKind::Local(f) = &mut m.funcs.get_mut(id).kind {
                let report = f
                    .builder_mut()
                    .dangling_instr_seq(None)
                    .i32_const(1)
                    .global_set(seen)
                    .i32_const(index)
                    .call(hit)
                    .id();
                let nothing = f.builder_mut().dangling_instr_seq(None).id();
                let entry = f.entry_block();
                let at = InstrLocId::default();
                let prologue = [
                    Instr::GlobalGet(GlobalGet { global: seen }),
                    Instr::Unop(Unop {
                        op: UnaryOp::I32Eqz,
                    }),
                    Instr::IfElse(IfElse {
                        consequent: report,
                        alternative: nothing,
                    }),
                ];
                let seq = f.block_mut(entry);
                for (i, instr) in prologue.into_iter().enumerate() {
                    seq.instrs.insert(i, (instr, at));
                }
            }
        }
        write(&mut m, output)
    }

    /// A function's name as a profile keeps it: without the `.N` that the tools append to tell
    /// apart functions of one name (two crates' copies of `<String as Display>::fmt`). N
    /// counts in the module's order, so it moves whenever a function is added or removed
    /// before it, in code that has nothing to do with it; a profile that kept it would go
    /// stale at every edit. Every copy of a profiled name stays in the primary.
    pub fn base_name(name: &str) -> &str {
        match name.rsplit_once('.') {
            Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
            _ => name,
        }
    }

    /// Prints the profile of the function indices in HITS: their names, sorted, one a line.
    /// A name is the whole mangled one, hash included: the hash names one instance of a
    /// generic function and stays the same while the function and the toolchain do, so a
    /// profile outlives most edits; a function it no longer names moves to the secondary.
    fn names(input: &str, hits: &str) -> Result<()> {
        let m = read(input, true)?;
        let text = std::fs::read_to_string(hits).map_err(|e| format!("{hits}: {e}"))?;
        let by_index: HashMap<usize, &str> = m
            .funcs
            .iter()
            .filter_map(|f| f.name.as_deref().map(|n| (f.id().index(), n)))
            .collect();
        let mut out = BTreeSet::new();
        for word in text.split_whitespace() {
            let i: usize = word
                .parse()
                .map_err(|_| format!("{hits}: `{word}` is not a function index"))?;
            // A function without a name always stays in the primary (see `split`).
            if let Some(n) = by_index.get(&i) {
                out.insert(base_name(n).to_string());
            }
        }
        for n in out {
            println!("{n}");
        }
        Ok(())
    }

    /// Collects what a function body refers to other than by a direct call.
    #[derive(Default)]
    struct Refs {
        ref_funcs: Vec<FunctionId>,
        calls: Vec<FunctionId>,
        tail_calls: Vec<FunctionId>,
        segments: bool,
    }

    impl<'a> Visitor<'a> for Refs {
        fn visit_instr(&mut self, instr: &'a Instr, _: &'a InstrLocId) {
            match instr {
                Instr::RefFunc(r) => self.ref_funcs.push(r.func),
                Instr::Call(c) => self.calls.push(c.func),
                Instr::ReturnCall(c) => self.tail_calls.push(c.func),
                Instr::MemoryInit(_)
                | Instr::DataDrop(_)
                | Instr::TableInit(_)
                | Instr::ElemDrop(_) => self.segments = true,
                _ => {}
            }
        }
    }

    /// Turns each direct call of a moved function into a call through its table slot.
    struct Redirect<'a> {
        slot: &'a HashMap<FunctionId, u32>,
        ty: &'a HashMap<FunctionId, TypeId>,
        table: TableId,
    }

    impl VisitorMut for Redirect<'_> {
        fn start_instr_seq_mut(&mut self, seq: &mut InstrSeq) {
            if !seq
                .instrs
                .iter()
                .any(|(i, _)| matches!(i, Instr::Call(c) if self.slot.contains_key(&c.func)))
            {
                return;
            }
            let old = std::mem::take(&mut seq.instrs);
            for (instr, loc) in old {
                match instr {
                    Instr::Call(Call { func }) if self.slot.contains_key(&func) => {
                        let slot = self.slot[&func] as i32;
                        seq.instrs.push((
                            Instr::Const(Const {
                                value: Value::I32(slot),
                            }),
                            loc,
                        ));
                        seq.instrs.push((
                            Instr::CallIndirect(CallIndirect {
                                ty: self.ty[&func],
                                table: self.table,
                            }),
                            loc,
                        ));
                    }
                    other => seq.instrs.push((other, loc)),
                }
            }
        }
    }

    fn refs(f: &walrus::LocalFunction) -> Refs {
        let mut r = Refs::default();
        dfs_in_order(&mut r, f, f.entry_block());
        r
    }

    pub fn split(input: &str, profile: &str, out1: &str, out2: &str) -> Result<()> {
        let text = std::fs::read_to_string(profile).map_err(|e| format!("{profile}: {e}"))?;
        let wanted: HashSet<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(base_name)
            .collect();
        // LOCKSTEP_SPLIT_NAMES=1 keeps the names, for reading a stack trace of a split build.
        let names = std::env::var_os("LOCKSTEP_SPLIT_NAMES").is_some();
        let mut p = read(input, names)?;
        let mut s = read(input, names)?;
        if p.funcs.iter().all(|f| f.name.is_none()) {
            return Err(format!(
                "{input} has no function names to match the profile with (wasm-opt -g keeps them)"
            ));
        }

        // A profile recorded for another build (another compiler, or the bundles built without
        // scripts/site-env.sh) names functions this module does not have: split by it, almost
        // everything would move, and every first view would load the rest synchronously.
        let present: HashSet<&str> = p
            .funcs
            .iter()
            .filter_map(|f| f.name.as_deref().map(base_name))
            .collect();
        let matched = wanted.iter().filter(|n| present.contains(**n)).count();
        if matched * 2 < wanted.len() {
            return Err(format!(
                "{profile} names {} functions, of which only {matched} are in {input}: it was \
                 recorded for another build (another compiler, or the bundles built without \
                 scripts/site-env.sh). Build with `source scripts/site-env.sh` first, or record \
                 the profile again: node scripts/split-profile.mjs",
                wanted.len()
            ));
        }

        // What stays: the profile's functions, those without a name (a profile cannot name
        // them), whatever the host or the runtime names
        // (exports, the start function), and whatever is referred to other than by a direct
        // call or a slot of the function table.
        let mut keep: HashSet<FunctionId> = p
            .funcs
            .iter_local()
            .filter(|(id, _)| {
                p.funcs
                    .get(*id)
                    .name
                    .as_deref()
                    .is_none_or(|n| wanted.contains(base_name(n)))
            })
            .map(|(id, _)| id)
            .collect();
        for e in p.exports.iter() {
            if let ExportItem::Function(f) = e.item {
                keep.insert(f);
            }
        }
        keep.extend(p.start);
        let mut table = None;
        for e in p.elements.iter() {
            match (&e.kind, &e.items) {
                (
                    ElementKind::Active {
                        table: t,
                        offset: ConstExpr::Value(Value::I32(_)),
                    },
                    ElementItems::Functions(_),
                ) => {
                    if table.is_some_and(|x| x != *t) {
                        return Err("functions fill two tables; one is expected".into());
                    }
                    table = Some(*t);
                }
                (_, ElementItems::Functions(fs)) => keep.extend(fs.iter().copied()),
                (_, ElementItems::Expressions(_, es)) => {
                    keep.extend(es.iter().filter_map(|e| match e {
                        ConstExpr::RefFunc(f) => Some(*f),
                        _ => None,
                    }))
                }
            }
        }
        for g in p.globals.iter() {
            if let GlobalKind::Local(ConstExpr::RefFunc(f)) = g.kind {
                keep.insert(f);
            }
        }
        let table = table.ok_or("no function table to call the moved functions through")?;
        // Each body is read once.
        let bodies: Vec<(FunctionId, Refs)> =
            p.funcs.iter_local().map(|(id, f)| (id, refs(f))).collect();
        for (id, r) in &bodies {
            keep.extend(r.ref_funcs.iter().copied());
            if r.segments {
                keep.insert(*id);
            }
            // A tail call cannot go through a placeholder that returns to JavaScript.
            keep.extend(r.tail_calls.iter().copied());
        }
        let mut called_from_kept = BTreeSet::new();
        for (id, r) in &bodies {
            if keep.contains(id) {
                called_from_kept.extend(r.calls.iter().copied());
            }
        }
        let moved: BTreeSet<FunctionId> = p
            .funcs
            .iter_local()
            .map(|(id, _)| id)
            .filter(|id| !keep.contains(id))
            .collect();
        if moved.is_empty() {
            return Err("the profile keeps every function: nothing to split".into());
        }
        let ty: HashMap<FunctionId, TypeId> = p.funcs.iter().map(|f| (f.id(), f.ty())).collect();

        // Slots: where the table holds a moved function, and a new slot at the end for each
        // moved function that a kept one calls directly.
        let mut slots: BTreeMap<u32, FunctionId> = BTreeMap::new();
        for e in p.elements.iter() {
            if let (
                ElementKind::Active {
                    table: t,
                    offset: ConstExpr::Value(Value::I32(o)),
                },
                ElementItems::Functions(fs),
            ) = (&e.kind, &e.items)
            {
                if *t == table {
                    for (i, f) in fs.iter().enumerate() {
                        if moved.contains(f) {
                            slots.insert(*o as u32 + i as u32, *f);
                        }
                    }
                }
            }
        }
        let mut slot_of: HashMap<FunctionId, u32> = HashMap::new();
        for (slot, f) in &slots {
            slot_of.entry(*f).or_insert(*slot);
        }
        let old_size = u32::try_from(p.tables.get(table).initial).map_err(|_| "table too large")?;
        let mut next = old_size;
        for f in called_from_kept.iter().filter(|f| moved.contains(f)) {
            if !slot_of.contains_key(f) {
                slot_of.insert(*f, next);
                slots.insert(next, *f);
                next += 1;
            }
        }
        {
            let t = p.tables.get_mut(table);
            t.initial = u64::from(next);
            if let Some(max) = t.maximum.as_mut() {
                *max = (*max).max(u64::from(next));
            }
        }

        // The primary: placeholders in the moved functions' slots, calls redirected.
        let mut placeholder: HashMap<u32, FunctionId> = HashMap::new();
        for (slot, f) in &slots {
            let (ph, _) = p.add_import_func(PLACEHOLDER, &slot.to_string(), ty[f]);
            placeholder.insert(*slot, ph);
        }
        for e in p.elements.iter_mut() {
            if let (
                ElementKind::Active {
                    table: t,
                    offset: ConstExpr::Value(Value::I32(o)),
                },
                ElementItems::Functions(fs),
            ) = (&e.kind, &mut e.items)
            {
                if *t == table {
                    let o = *o as u32;
                    for (i, f) in fs.iter_mut().enumerate() {
                        if moved.contains(f) {
                            *f = placeholder[&(o + i as u32)];
                        }
                    }
                }
            }
        }
        if next > old_size {
            let items = (old_size..next).map(|s| placeholder[&s]).collect();
            // A segment counts as used through its table's list (walrus's gc).
            let id = p.elements.add(
                ElementKind::Active {
                    table,
                    offset: ConstExpr::Value(Value::I32(old_size as i32)),
                },
                ElementItems::Functions(items),
            );
            p.tables.get_mut(table).elem_segments.insert(id);
        }
        let redirect_slots: HashMap<FunctionId, u32> = slot_of
            .iter()
            .filter(|(f, _)| called_from_kept.contains(f))
            .map(|(f, s)| (*f, *s))
            .collect();
        for (id, f) in p.funcs.iter_local_mut() {
            if keep.contains(&id) {
                let entry = f.entry_block();
                dfs_pre_order_mut(
                    &mut Redirect {
                        slot: &redirect_slots,
                        ty: &ty,
                        table,
                    },
                    f,
                    entry,
                );
            }
        }

        // The secondary: the same module, with every kept function, the memory, the tables and
        // the globals imported from the primary, and one segment that fills the moved
        // functions' slots. Ids are arena indices, the same in both parses of one file.
        let index_of = |id: FunctionId| id.index();
        let moved_index: HashSet<usize> = moved.iter().map(|f| index_of(*f)).collect();
        let s_ids: Vec<FunctionId> = s.funcs.iter().map(|f| f.id()).collect();
        let s_by_index: HashMap<usize, FunctionId> =
            s_ids.iter().map(|id| (id.index(), *id)).collect();
        for id in &s_ids {
            let is_local = matches!(s.funcs.get(*id).kind, FunctionKind::Local(_));
            if is_local && !moved_index.contains(&id.index()) {
                let t = s.funcs.get(*id).ty();
                let import = s.imports.add(
                    PRIMARY,
                    &format!("f{}", id.index()),
                    ImportKind::Function(*id),
                );
                s.funcs.get_mut(*id).kind =
                    FunctionKind::Import(ImportedFunction { import, ty: t });
            }
        }
        let exports: Vec<_> = s.exports.iter().map(|e| e.id()).collect();
        for e in exports {
            s.exports.delete(e);
        }
        s.start = None;
        let elements: Vec<_> = s.elements.iter().map(|e| e.id()).collect();
        for e in elements {
            s.elements.delete(e);
        }
        let data: Vec<_> = s.data.iter().map(|d| d.id()).collect();
        for d in data {
            s.data.delete(d);
        }
        let memories: Vec<_> = s.memories.iter().map(|m| m.id()).collect();
        for id in memories {
            if s.memories.get(id).import.is_none() {
                let import = s.imports.add(
                    PRIMARY,
                    &format!("memory{}", id.index()),
                    ImportKind::Memory(id),
                );
                let mem = s.memories.get_mut(id);
                mem.import = Some(import);
                mem.data_segments.clear();
            }
        }
        let tables: Vec<_> = s.tables.iter().map(|t| t.id()).collect();
        for id in tables {
            if s.tables.get(id).import.is_none() {
                let import = s.imports.add(
                    PRIMARY,
                    &format!("table{}", id.index()),
                    ImportKind::Table(id),
                );
                let t = s.tables.get_mut(id);
                t.import = Some(import);
                t.init = None;
                t.elem_segments.clear();
                if id.index() == table.index() {
                    t.initial = u64::from(next);
                    if let Some(max) = t.maximum.as_mut() {
                        *max = (*max).max(u64::from(next));
                    }
                }
            }
        }
        let globals: Vec<_> = s.globals.iter().map(|g| g.id()).collect();
        for id in globals {
            if matches!(s.globals.get(id).kind, GlobalKind::Local(_)) {
                let import = s.imports.add(
                    PRIMARY,
                    &format!("global{}", id.index()),
                    ImportKind::Global(id),
                );
                s.globals.get_mut(id).kind = GlobalKind::Import(import);
            }
        }
        let s_table = s
            .tables
            .iter()
            .find(|t| t.id().index() == table.index())
            .map(|t| t.id())
            .ok_or("the secondary lost the function table")?;
        // One segment per run of consecutive slots.
        let mut run: Vec<FunctionId> = Vec::new();
        let mut run_start = 0u32;
        let flush = |s: &mut Module, start: u32, run: &mut Vec<FunctionId>| {
            if !run.is_empty() {
                let id = s.elements.add(
                    ElementKind::Active {
                        table: s_table,
                        offset: ConstExpr::Value(Value::I32(start as i32)),
                    },
                    ElementItems::Functions(std::mem::take(run)),
                );
                s.tables.get_mut(s_table).elem_segments.insert(id);
            }
        };
        for (slot, f) in &slots {
            if !run.is_empty() && *slot != run_start + run.len() as u32 {
                flush(&mut s, run_start, &mut run);
            }
            if run.is_empty() {
                run_start = *slot;
            }
            run.push(s_by_index[&index_of(*f)]);
        }
        flush(&mut s, run_start, &mut run);
        walrus::passes::gc::run(&mut s);

        // The primary exports what the secondary imports.
        let p_funcs: HashMap<usize, FunctionId> =
            p.funcs.iter().map(|f| (f.id().index(), f.id())).collect();
        let p_globals: HashMap<usize, _> =
            p.globals.iter().map(|g| (g.id().index(), g.id())).collect();
        let p_tables: HashMap<usize, _> =
            p.tables.iter().map(|t| (t.id().index(), t.id())).collect();
        let p_memories: HashMap<usize, _> = p
            .memories
            .iter()
            .map(|m| (m.id().index(), m.id()))
            .collect();
        let wanted_exports: Vec<(String, ImportKind)> = s
            .imports
            .iter()
            .filter(|i| i.module == PRIMARY)
            .map(|i| (i.name.clone(), i.kind.clone()))
            .collect();
        for (name, kind) in wanted_exports {
            let item: ExportItem = match kind {
                ImportKind::Function(f) => p_funcs[&f.index()].into(),
                ImportKind::Global(g) => p_globals[&g.index()].into(),
                ImportKind::Table(t) => p_tables[&t.index()].into(),
                ImportKind::Memory(m) => p_memories[&m.index()].into(),
                ImportKind::Tag(_) => return Err("exception tags are not split".into()),
            };
            p.exports.add(&format!("{PRIMARY}_{name}"), item);
        }
        // The secondary's import names follow the export names.
        let renames: Vec<_> = s
            .imports
            .iter()
            .filter(|i| i.module == PRIMARY)
            .map(|i| i.id())
            .collect();
        for id in renames {
            let i = s.imports.get_mut(id);
            i.name = format!("{PRIMARY}_{}", i.name);
        }
        p.exports.add(TABLE_EXPORT, table);
        for f in &moved {
            p.funcs.delete(*f);
        }
        walrus::passes::gc::run(&mut p);

        let kept = p.funcs.iter_local().count();
        let moved_n = s.funcs.iter_local().count();
        write(&mut p, out1)?;
        write(&mut s, out2)?;
        // A profiled function this build lacks was renamed, removed or changed its instance:
        // the first view may then call into the rest (and load it at once) until the profile
        // is recorded again.
        let stale = wanted.len() - matched;
        let stale = if stale == 0 {
            String::new()
        } else {
            format!("; {stale} of the profile's {} functions are not in this build (node scripts/split-profile.mjs records it again)", wanted.len())
        };
        eprintln!(
            "lockstep-split: {input}: {kept} functions kept, {moved_n} moved, {} placeholder slots{stale}",
            slots.len()
        );
        Ok(())
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::native::{split, PLACEHOLDER, PRIMARY, TABLE_EXPORT};
    use walrus::ir::{BinaryOp, MemArg, StoreKind, Value};
    use walrus::{
        ConstExpr, ElementItems, ElementKind, FunctionBuilder, Module, ModuleConfig, RefType,
        ValType,
    };

    /// A module shaped like a bundle: a memory, a mutable global, a function table, and
    /// `main(x) = a(x) + table[1](x)`, where `a(x) = helper(b(x)) + 1`, `b(x)` stores x at
    /// address 16 and returns `2x + counter`, and `helper(x) = x + 100`.
    fn bundle() -> Vec<u8> {
        let mut m = Module::with_config(ModuleConfig::new());
        let memory = m.memories.add_local(false, false, 1, None, None);
        m.exports.add("memory", memory);
        let counter =
            m.globals
                .add_local(ValType::I32, true, false, ConstExpr::Value(Value::I32(7)));
        let table = m.tables.add_local(false, 2, Some(2), RefType::FUNCREF);
        let unary = m.types.add(&[ValType::I32], &[ValType::I32]);

        let one = |m: &mut Module,
                   name: &str,
                   body: &dyn Fn(&mut walrus::InstrSeqBuilder, walrus::LocalId)| {
            let mut f = FunctionBuilder::new(&mut m.types, &[ValType::I32], &[ValType::I32]);
            f.name(name.to_string());
            let x = m.locals.add(ValType::I32);
            body(&mut f.func_body(), x);
            f.finish(vec![x], &mut m.funcs)
        };
        let helper = one(&mut m, "helper", &|b, x| {
            b.local_get(x).i32_const(100).binop(BinaryOp::I32Add);
        });
        let mem_arg = MemArg {
            align: 4,
            offset: 0,
        };
        let b_fn = one(&mut m, "b", &|b, x| {
            b.i32_const(16)
                .local_get(x)
                .store(memory, StoreKind::I32 { atomic: false }, mem_arg)
                .local_get(x)
                .i32_const(2)
                .binop(BinaryOp::I32Mul)
                .global_get(counter)
                .binop(BinaryOp::I32Add);
        });
        let a_fn = one(&mut m, "a", &|b, x| {
            b.local_get(x)
                .call(b_fn)
                .call(helper)
                .i32_const(1)
                .binop(BinaryOp::I32Add);
        });
        let main = one(&mut m, "main", &|b, x| {
            b.local_get(x)
                .call(a_fn)
                .local_get(x)
                .i32_const(1)
                .call_indirect(unary, table)
                .binop(BinaryOp::I32Add);
        });
        m.exports.add("main", main);
        let seg = m.elements.add(
            ElementKind::Active {
                table,
                offset: ConstExpr::Value(Value::I32(1)),
            },
            ElementItems::Functions(vec![b_fn]),
        );
        m.tables.get_mut(table).elem_segments.insert(seg);
        m.emit_wasm()
    }

    /// Runs `main(5)` twice in Node.js, answering placeholders as the page's glue does, and
    /// prints the results, how often the secondary was loaded and the word at address 16.
    fn run_in_node(primary: &std::path::Path, secondary: Option<&std::path::Path>) -> String {
        let script = format!(
            r#"const fs = require('fs');
let inst, loaded = false, loads = 0;
const rest = {secondary};
const imports = {{ {PLACEHOLDER}: new Proxy({{}}, {{ get: (_, slot) => (...a) => {{
  if (!loaded) {{ loads++; new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(rest)), {{ {PRIMARY}: inst.exports }}); loaded = true; }}
  return inst.exports.{TABLE_EXPORT}.get(Number(slot))(...a);
}} }}) }};
inst = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync({primary:?})), imports);
const r1 = inst.exports.main(5), r2 = inst.exports.main(5);
console.log([r1, r2, loads, new Int32Array(inst.exports.memory.buffer)[4]].join(' '));"#,
            secondary = secondary.map_or("null".to_string(), |s| format!("{s:?}")),
        );
        let out = std::process::Command::new("node")
            .arg("-e")
            .arg(script)
            .output()
            .expect("node runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_split_module_computes_what_the_whole_one_does_and_loads_the_rest_once() {
        let dir = std::env::temp_dir().join(format!("lockstep-split-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let whole = dir.join("whole.wasm");
        std::fs::write(&whole, bundle()).unwrap();
        let profile = dir.join("profile.txt");
        std::fs::write(&profile, "# kept\nmain\nhelper\n").unwrap();
        let (p, s) = (dir.join("primary.wasm"), dir.join("secondary.wasm"));
        let path = |x: &std::path::Path| x.to_str().unwrap().to_string();
        split(&path(&whole), &path(&profile), &path(&p), &path(&s)).unwrap();

        // Both halves are valid modules (walrus validates what it reads), and the moved
        // functions live only in the secondary.
        let primary = ModuleConfig::new()
            .parse(&std::fs::read(&p).unwrap())
            .unwrap();
        let secondary = ModuleConfig::new()
            .parse(&std::fs::read(&s).unwrap())
            .unwrap();
        assert_eq!(
            primary.funcs.iter_local().count(),
            2,
            "main and helper stay"
        );
        assert_eq!(secondary.funcs.iter_local().count(), 2, "a and b move");
        let placeholders = primary
            .imports
            .iter()
            .filter(|i| i.module == PLACEHOLDER)
            .count();
        assert_eq!(placeholders, 2, "b's slot and a new one for a");
        assert!(secondary.imports.iter().any(|i| i.module == PRIMARY));

        // 5 → b: 17 (and 5 at address 16) → helper: 117 → a: 118; plus table[1](5) = 17.
        assert_eq!(run_in_node(&whole, None), "135 135 0 5");
        assert_eq!(run_in_node(&p, Some(&s)), "135 135 1 5");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_profile_names_a_function_whatever_number_tells_its_copies_apart() {
        let dir = std::env::temp_dir().join(format!("lockstep-split-dup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The tools number functions of one name in the module's order: an edit elsewhere
        // turns the profile's `helper.7` into this build's `helper.2`.
        let mut m = ModuleConfig::new().parse(&bundle()).unwrap();
        let helper = m.funcs.by_name("helper").unwrap();
        m.funcs.get_mut(helper).name = Some("helper.2".into());
        std::fs::write(dir.join("whole.wasm"), m.emit_wasm()).unwrap();
        std::fs::write(dir.join("profile.txt"), "main\nhelper.7\n").unwrap();
        let out = |n: &str| dir.join(n).to_str().unwrap().to_string();
        split(
            &out("whole.wasm"),
            &out("profile.txt"),
            &out("p.wasm"),
            &out("s.wasm"),
        )
        .unwrap();
        let primary = ModuleConfig::new()
            .parse(&std::fs::read(dir.join("p.wasm")).unwrap())
            .unwrap();
        assert_eq!(
            primary.funcs.iter_local().count(),
            2,
            "main and helper stay"
        );
        assert_eq!(
            super::native::base_name("f::h0123abcd.2433"),
            "f::h0123abcd"
        );
        assert_eq!(super::native::base_name("f::h0123abcd"), "f::h0123abcd");
        assert_eq!(super::native::base_name("a.b"), "a.b");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_profile_that_keeps_everything_is_refused() {
        let dir = std::env::temp_dir().join(format!("lockstep-split-all-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let whole = dir.join("whole.wasm");
        std::fs::write(&whole, bundle()).unwrap();
        let profile = dir.join("profile.txt");
        std::fs::write(&profile, "main\nhelper\na\nb\n").unwrap();
        let out = |n: &str| dir.join(n).to_str().unwrap().to_string();
        let err = split(
            &out("whole.wasm"),
            &out("profile.txt"),
            &out("p.wasm"),
            &out("s.wasm"),
        )
        .unwrap_err();
        assert!(err.contains("nothing to split"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
