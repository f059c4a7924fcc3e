//! Where the exported tests go in a Node checkout: tests with a native
//! scope (or checks after the main script, which run from the addon's
//! event-loop callback) in one addon folder with its bindings (a
//! `node.h` one and a Node-API one) shared by all of them;
//! JavaScript-only tests in `test/async-hooks/`.

use super::Export;
use std::path::Path;

/// The addon folder.
pub const ADDON_DIR: &str = "test/addons/async-context-scopes";

/// The folder of the tests that need no addon.
pub const JS_DIR: &str = "test/async-hooks";

/// The addon's source (`node/binding.cc`): `node::CallbackScope`,
/// `node::MakeCallback`, and a callback from the event loop.
pub const BINDING_CC: &str = include_str!("node/binding.cc");

/// The Node-API module's source (`node/napi_binding.c`):
/// `napi_async_init` and `napi_make_callback`.
pub const NAPI_BINDING_C: &str = include_str!("node/napi_binding.c");

/// Its `binding.gyp` (both targets), as Node's addon tests write theirs.
pub const BINDING_GYP: &str = include_str!("node/binding.gyp");

/// The stand-in for Node's `test/common` used by the proof (never
/// exported).
pub const COMMON_JS: &str = include_str!("node/common/index.js");

/// Its ES module face (`test/common/index.mjs`), for the `.mjs` tests.
pub const COMMON_MJS: &str = include_str!("node/common/index.mjs");

/// The stand-in for Node's `test/common/child_process.js`: the helpers
/// with which a test runs a child and checks how it ended.
pub const COMMON_CHILD_PROCESS_JS: &str = include_str!("node/common/child_process.js");

/// The path of the ES module a test runs (its `fixture`): the test's own
/// with `.mjs`.
pub fn fixture_path(test: &str) -> String {
    match test.strip_suffix(".js") {
        Some(stem) => format!("{stem}.mjs"),
        None => format!("{test}.mjs"),
    }
}

/// A test file's path in a Node checkout.
pub fn path_of(file: &str, binding: bool) -> String {
    let dir = if binding { ADDON_DIR } else { JS_DIR };
    format!("{dir}/{file}")
}

/// Write `export`'s tests under `root` as a Node checkout holds them: the
/// addon folder (`binding.cc`, `binding.gyp`, its tests) and
/// `test/async-hooks/`. Files of earlier exports in those folders are left
/// alone; each file is written whole and renamed into place.
pub fn write(root: &Path, export: &Export) -> std::io::Result<()> {
    let addon = root.join(ADDON_DIR);
    if export.tests.iter().any(|t| t.rendered.binding) {
        std::fs::create_dir_all(&addon)?;
        write_file(&addon.join("binding.cc"), BINDING_CC)?;
        write_file(&addon.join("napi_binding.c"), NAPI_BINDING_C)?;
        write_file(&addon.join("binding.gyp"), BINDING_GYP)?;
    }
    for t in &export.tests {
        let path = root.join(&t.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        write_file(&path, &t.rendered.source)?;
        if let Some(fixture) = &t.rendered.fixture {
            write_file(&path.with_extension("mjs"), fixture)?;
        }
    }
    Ok(())
}

/// Async work that a `test/common` may do while it loads (a newer one reads
/// `globalThis.localStorage`, whose warning queues a tick on Node 26): the
/// proof's second run puts it at the top of its stand-in, and every test
/// must pass there too, whatever ids that work takes and whenever its
/// callbacks run.
pub const INCIDENTAL_WORK: &str = "\
// Async work of test/common's own while it loads (scopecheck export --prove,
// its second run): a tick, an Immediate and a promise reaction, which take
// ids before the test begins and run while it runs.
process.nextTick(() => {});
setImmediate(() => {});
Promise.resolve().then(() => {});
";

/// Which `test/common` stand-in a scratch tree has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Common {
    /// [`COMMON_JS`] as it is.
    Plain,
    /// [`COMMON_JS`] doing [`INCIDENTAL_WORK`] first.
    WithIncidentalWork,
}

impl Common {
    /// The stand-in's `index.js`.
    pub fn index_js(self) -> String {
        match self {
            Common::Plain => COMMON_JS.to_string(),
            Common::WithIncidentalWork => COMMON_JS.replacen(
                "'use strict';\n",
                &format!("'use strict';\n{INCIDENTAL_WORK}"),
                1,
            ),
        }
    }
}

/// The scratch tree of the proof: `write`, plus the `test/common` stand-in.
pub fn write_scratch(root: &Path, export: &Export, common: Common) -> std::io::Result<()> {
    write(root, export)?;
    let dir = root.join("test/common");
    std::fs::create_dir_all(&dir)?;
    write_file(&dir.join("index.js"), &common.index_js())?;
    write_file(&dir.join("child_process.js"), COMMON_CHILD_PROCESS_JS)?;
    write_file(&dir.join("index.mjs"), COMMON_MJS)
}

fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    crate::files::replace(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_common_does_its_async_work_first_and_is_otherwise_the_plain_one() {
        let busy = Common::WithIncidentalWork.index_js();
        assert!(
            busy.starts_with(&format!("'use strict';\n{INCIDENTAL_WORK}")),
            "{busy}"
        );
        assert_eq!(
            busy.replacen(INCIDENTAL_WORK, "", 1),
            Common::Plain.index_js()
        );
        assert!(
            INCIDENTAL_WORK.contains("process.nextTick(")
                && INCIDENTAL_WORK.contains("setImmediate(")
                && INCIDENTAL_WORK.contains(".then(")
        );
    }
}
