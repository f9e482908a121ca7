//! Each library crate's public surface, kept in `tests/surface/CRATE.txt`
//! so that a change to it shows in review: every item a caller outside
//! the crate can name (re-exports, public items of public modules, and the
//! public methods of the types among them), one per line, read from the
//! sources with syn. `SEAMS_UPDATE_DOCS=1` writes the files anew.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use seams_tests::repo_root;
use syn::{Attribute, Item, UseTree, Visibility};

/// The library crates, by the name callers use and their source root.
const CRATES: [(&str, &str); 9] = [
    ("seams", "host/src/lib.rs"),
    ("seams_core", "host/core/src/lib.rs"),
    ("seams_model", "host/model/src/lib.rs"),
    ("seams_runtime", "host/runtime/src/lib.rs"),
    ("seams_templates", "host/templates/src/lib.rs"),
    ("seams_authoring", "host/authoring/src/lib.rs"),
    ("seams_registry", "host/registry/src/lib.rs"),
    ("seams_serve", "host/serve/src/lib.rs"),
    ("seams_ui_model", "generators/ui-model/src/lib.rs"),
];

/// Whether `attrs` hold `#[cfg(test)]` (or a `cfg` of `test` among others).
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = a
                .meta
                .require_list()
                .map(|l| l.tokens.to_string())
                .unwrap_or_default();
            text == "test" || text.starts_with("test") || text.contains("any (test")
        }
    })
}

/// The `cfg` an item is built under, as the surface notes it (a feature,
/// `fuzzing`), if any.
fn condition(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("cfg")).map(|a| {
        a.meta
            .require_list()
            .map(|l| l.tokens.to_string())
            .unwrap_or_default()
    })
}

fn public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// Where the file of module `name`, declared in `file`, is.
fn module_file(file: &Path, name: &str, attrs: &[Attribute]) -> PathBuf {
    let dir = file.parent().unwrap();
    for a in attrs {
        if a.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            return dir.join(s.value());
        }
    }
    let stem = file.file_stem().unwrap().to_string_lossy();
    let base = if stem == "lib" || stem == "mod" || stem == "main" {
        dir.to_owned()
    } else {
        dir.join(&*stem)
    };
    let flat = base.join(format!("{name}.rs"));
    if flat.is_file() {
        flat
    } else {
        base.join(name).join("mod.rs")
    }
}

/// What one crate's sources say.
#[derive(Default)]
struct Found {
    /// Public paths, with the condition they are built under.
    items: BTreeMap<String, Option<String>>,
    /// Public inherent methods, by their type's name.
    methods: BTreeMap<String, BTreeSet<String>>,
}

/// Reads the module in `file` (items `items` when inline), whose path is
/// `prefix` when it is reachable from outside the crate.
fn walk(
    file: &Path,
    items: &[Item],
    prefix: Option<&str>,
    cond: Option<String>,
    found: &mut Found,
) {
    for item in items {
        let (vis, name, attrs): (Option<&Visibility>, Option<String>, &[Attribute]) = match item {
            Item::Fn(i) => (Some(&i.vis), Some(i.sig.ident.to_string()), &i.attrs),
            Item::Struct(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Enum(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Trait(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Const(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Static(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Type(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Union(i) => (Some(&i.vis), Some(i.ident.to_string()), &i.attrs),
            Item::Macro(i) => {
                let exported = i.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if exported
                    && !test_only(&i.attrs)
                    && let Some(ident) = &i.ident
                {
                    let root = prefix.unwrap_or("").split("::").next().unwrap_or("");
                    found
                        .items
                        .insert(format!("{root}::{ident}!"), cond.clone());
                }
                continue;
            }
            Item::Mod(m) => {
                if test_only(&m.attrs) {
                    continue;
                }
                let inner_cond = condition(&m.attrs).or(cond.clone());
                let inner_prefix = (public(&m.vis) && prefix.is_some())
                    .then(|| format!("{}::{}", prefix.unwrap(), m.ident));
                if let Some(path) = &inner_prefix {
                    found.items.insert(path.clone(), inner_cond.clone());
                }
                match &m.content {
                    Some((_, inner)) => {
                        walk(file, inner, inner_prefix.as_deref(), inner_cond, found)
                    }
                    None => {
                        let path = module_file(file, &m.ident.to_string(), &m.attrs);
                        let text = std::fs::read_to_string(&path)
                            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                        let parsed = syn::parse_file(&text)
                            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                        walk(
                            &path,
                            &parsed.items,
                            inner_prefix.as_deref(),
                            inner_cond,
                            found,
                        );
                    }
                }
                continue;
            }
            Item::Use(u) => {
                if let (true, Some(prefix)) = (public(&u.vis), prefix)
                    && !test_only(&u.attrs)
                {
                    let mut names = Vec::new();
                    leaves(&u.tree, &mut names);
                    let c = condition(&u.attrs).or(cond.clone());
                    for name in names {
                        found.items.insert(format!("{prefix}::{name}"), c.clone());
                    }
                }
                continue;
            }
            Item::Impl(i) => {
                if i.trait_.is_none()
                    && !test_only(&i.attrs)
                    && let syn::Type::Path(p) = &*i.self_ty
                    && let Some(last) = p.path.segments.last()
                {
                    for inner in &i.items {
                        if let syn::ImplItem::Fn(f) = inner
                            && public(&f.vis)
                            && !test_only(&f.attrs)
                        {
                            found
                                .methods
                                .entry(last.ident.to_string())
                                .or_default()
                                .insert(f.sig.ident.to_string());
                        }
                    }
                }
                continue;
            }
            _ => (None, None, &[]),
        };
        if let (Some(vis), Some(name), Some(prefix)) = (vis, name, prefix)
            && public(vis)
            && !test_only(attrs)
        {
            found.items.insert(
                format!("{prefix}::{name}"),
                condition(attrs).or(cond.clone()),
            );
        }
    }
}

/// The names a `use` tree makes (the last segment, or its rename; `*`
/// for a glob, with its path).
fn leaves(tree: &UseTree, out: &mut Vec<String>) {
    fn go(tree: &UseTree, path: &str, out: &mut Vec<String>) {
        match tree {
            UseTree::Path(p) => go(&p.tree, &format!("{path}{}::", p.ident), out),
            UseTree::Name(n) => out.push(n.ident.to_string()),
            UseTree::Rename(r) => out.push(r.rename.to_string()),
            UseTree::Glob(_) => out.push(format!("{path}*")),
            UseTree::Group(g) => g.items.iter().for_each(|t| go(t, path, out)),
        }
    }
    go(tree, "", out);
}

/// The surface of the crate `name` whose root is `lib`, one item a line.
fn surface(name: &str, lib: &Path) -> String {
    let text = std::fs::read_to_string(lib).unwrap();
    let parsed = syn::parse_file(&text).unwrap();
    let mut found = Found::default();
    walk(lib, &parsed.items, Some(name), None, &mut found);
    let mut lines = BTreeSet::new();
    for (path, cond) in &found.items {
        let note = cond
            .as_ref()
            .map(|c| format!("  #[cfg({c})]"))
            .unwrap_or_default();
        lines.insert(format!("{path}{note}"));
        let last = path.rsplit("::").next().unwrap();
        for method in found.methods.get(last).into_iter().flatten() {
            lines.insert(format!("{path}::{method}{note}"));
        }
    }
    lines.into_iter().map(|l| l + "\n").collect()
}

#[test]
fn each_crates_public_surface_is_the_one_its_file_records() {
    let dir = repo_root().join("tests/surface");
    let update = std::env::var_os("SEAMS_UPDATE_DOCS").is_some();
    let mut changed = Vec::new();
    for (name, lib) in CRATES {
        let now = surface(name, &repo_root().join(lib));
        let file = dir.join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &now).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(now.as_str()) {
            changed.push(name);
        }
    }
    assert!(
        changed.is_empty(),
        "the public surface of {changed:?} is not what tests/surface records: review the change, then run SEAMS_UPDATE_DOCS=1 tests/run -p seams --test e2e -- surface"
    );
}

#[test]
fn the_surface_reader_sees_reexports_modules_methods_and_conditions_and_skips_tests() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::write(
        dir.path().join("lib.rs"),
        "pub use a::{B, C as D};\nmod a;\npub mod m { pub fn f() {} fn g() {} }\n#[cfg(feature = \"testing\")]\npub mod testing { pub fn hook() {} }\n#[cfg(test)]\nmod tests { pub fn t() {} }\npub(crate) fn hidden() {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "pub struct B;\nimpl B { pub fn new() -> B { B } fn private(&self) {} }\npub struct C;\n",
    )
    .unwrap();
    assert_eq!(
        surface("x", &dir.path().join("lib.rs")),
        "x::B\nx::B::new\nx::D\nx::m\nx::m::f\nx::testing  #[cfg(feature = \"testing\")]\nx::testing::hook  #[cfg(feature = \"testing\")]\n"
    );
}
