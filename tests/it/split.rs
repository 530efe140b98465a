//! `lockstep-split`, which splits a page bundle by the profile of what its first view runs
//! (src/bin/split.rs), refuses a profile recorded for another build: split by it, almost every
//! function would move and every first view would stop to load the rest. The split itself is
//! tested in the browser (tests/e2e/specs/bundles.mjs), on the real bundles.

use std::process::Command;

use walrus::{FunctionBuilder, Module, ModuleConfig, ValType};

/// A module of `count` named functions, all exported through the function table as a bundle's
/// are reached, written with their names as the site's build leaves them for the split.
fn module_with_names(names: &[String]) -> Vec<u8> {
    let mut m = Module::with_config(ModuleConfig::new());
    let table = m
        .tables
        .add_local(false, names.len() as u64, None, walrus::RefType::FUNCREF);
    let mut ids = Vec::new();
    for name in names {
        let mut f = FunctionBuilder::new(&mut m.types, &[], &[ValType::I32]);
        f.func_body().i32_const(1);
        let id = f.finish(vec![], &mut m.funcs);
        m.funcs.get_mut(id).name = Some(name.clone());
        ids.push(id);
    }
    m.elements.add(
        walrus::ElementKind::Active {
            table,
            offset: walrus::ConstExpr::Value(walrus::ir::Value::I32(0)),
        },
        walrus::ElementItems::Functions(ids.clone()),
    );
    m.exports.add("first", ids[0]);
    m.emit_wasm()
}

#[test]
fn the_split_refuses_a_profile_recorded_for_another_build() {
    let scratch = crate::Scratch::new("split-stale");
    let names: Vec<String> = (0..40)
        .map(|k| format!("_ZN8lockstep4view{k}17h0123456789abcdefE"))
        .collect();
    let wasm = scratch.0.join("app_bg.wasm");
    std::fs::write(&wasm, module_with_names(&names)).unwrap();
    let split = |profile: &str| {
        let file = scratch.0.join("app.txt");
        std::fs::write(&file, profile).unwrap();
        Command::new(env!("CARGO_BIN_EXE_lockstep-split"))
            .args(["split", wasm.to_str().unwrap(), file.to_str().unwrap()])
            .arg(scratch.0.join("primary.wasm"))
            .arg(scratch.0.join("rest.wasm"))
            .output()
            .unwrap()
    };

    // Recorded for another compiler: the same functions under other hashes.
    let stale: String = names
        .iter()
        .map(|n| n.replace("h0123456789abcdef", "hfedcba9876543210") + "\n")
        .collect();
    let o = split(&format!("# What the first views run.\n{stale}"));
    assert_eq!(o.status.code(), Some(1));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("names 40 functions, of which only 0 are in")
            && said.contains("source scripts/site-env.sh")
            && said.contains("node scripts/split-profile.mjs"),
        "{said}"
    );
    assert!(!scratch.0.join("primary.wasm").exists(), "nothing written");

    // A profile that still names most of the module splits it.
    let current: String = names[..30].iter().map(|n| format!("{n}\n")).collect();
    let o = split(&format!("{current}{}", &stale[..stale.len() / 2]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(scratch.0.join("primary.wasm").is_file() && scratch.0.join("rest.wasm").is_file());
}
