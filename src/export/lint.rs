//! Node's own conventions for a test file that its lint enforces with
//! custom rules not published on the npm registry (`tools/eslint-rules` in
//! <https://github.com/nodejs/node>: `required-modules`,
//! `require-common-first`), and the layout rule of `test/addons/` (Node runs
//! every `.js` of an addon folder as a test). ESLint's and @stylistic's
//! published rules run from `tools/lint-export/` (docs/export.md).

use super::layout;

/// What in `source`, a test to be written at `path`, breaks Node's
/// conventions; empty when nothing does.
pub fn conventions(path: &str, source: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let common = if path.starts_with(layout::ADDON_DIR) {
        "../../common"
    } else {
        "../common"
    };
    if path.ends_with(".mjs") {
        // An ES module: `common` imported before anything else.
        let first = source
            .lines()
            .find(|l| !l.starts_with("//") && !l.trim().is_empty());
        let wanted = format!("'{common}/index.mjs';");
        if !first.is_some_and(|l| l.starts_with("import ") && l.ends_with(&wanted)) {
            problems.push(format!(
                "the first statement does not import {common}/index.mjs"
            ));
        }
    } else {
        let mut lines = source.lines().filter(|l| !l.starts_with("// Flags:"));
        if lines.next() != Some("'use strict';") {
            problems.push("'use strict'; is not the first statement".to_string());
        }
        let common = format!("require('{common}')");
        match source.find("require(") {
            None => problems.push(format!("no {common}")),
            Some(at) if !source[at..].starts_with(&common) => {
                problems.push(format!("the first require is not {common}"))
            }
            Some(_) => {}
        }
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    if !(file.starts_with("test-") && (file.ends_with(".js") || file.ends_with(".mjs"))) {
        problems.push(format!(
            "{file}: a test's file name is test-*.js or test-*.mjs"
        ));
    }
    if path.starts_with(layout::ADDON_DIR) {
        // Every file a test requires whose name says binding (the `node.h`
        // one or the Node-API one; not `internal/test/binding`) comes from
        // the build folder.
        let required = source.split("require(").skip(1).filter_map(|rest| {
            let quote = rest.chars().next()?;
            let rest = rest.get(1..)?;
            rest.split(quote).next()
        });
        let misplaced = required
            .filter(|m| {
                m.starts_with('.') && m.rsplit('/').next().is_some_and(|f| f.contains("binding"))
            })
            .any(|m| !m.starts_with("./build/${common.buildType}/"));
        if misplaced || (source.contains("binding.") && !source.contains("/binding`)")) {
            problems
                .push("the binding is not loaded from ./build/${common.buildType}/".to_string());
        }
    }
    for banned in ["assert.equal(", "assert.deepEqual(", "assert.notEqual("] {
        if source.contains(banned) {
            problems.push(format!("{banned}...): use the strict assertion"));
        }
    }
    problems.extend(ours(source));
    problems
}

/// This project's own names, which a file exported into Node's tree must
/// not carry: it stands alone there.
pub const OURS: &[&str] = &[
    "scopecheck",
    ".trace",
    "docs/",
    "the model",
    "lockstep",
    "mutant",
];

/// Each of [`OURS`] that `text` names (case aside).
pub fn ours(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    (OURS.iter())
        .filter(|o| lower.contains(*o))
        .map(|o| {
            format!("names this project's own `{o}`: the file must stand alone in Node's tree")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_names_the_projects_own_things_is_refused_and_the_addons_do_not() {
        assert_eq!(ours("// the ops of x.trace on v20").len(), 1);
        assert_eq!(ours("// Scopecheck's model").len(), 1);
        assert!(ours("// a lazy scope opened above JS contexts").is_empty());
        for source in [
            layout::BINDING_CC,
            layout::NAPI_BINDING_C,
            layout::BINDING_GYP,
        ] {
            assert_eq!(ours(source), Vec::<String>::new());
        }
    }

    const GOOD: &str = "// Flags: --expose-internals\n'use strict';\n// What it shows.\n\nconst common = require('../../common');\nconst assert = require('assert');\nconst binding = require(`./build/${common.buildType}/binding`);\n";

    #[test]
    fn a_test_as_node_writes_it_passes_and_each_breach_is_named() {
        let addon = format!("{}/test-x.js", layout::ADDON_DIR);
        assert_eq!(conventions(&addon, GOOD), Vec::<String>::new());
        // The Node-API module, beside the binding or alone.
        let napi = "const napi = require(`./build/${common.buildType}/napi_binding`);\n";
        assert_eq!(
            conventions(&addon, &format!("{GOOD}{napi}")),
            Vec::<String>::new()
        );
        let alone = GOOD.replace(
            "const binding = require(`./build/${common.buildType}/binding`);\n",
            napi,
        );
        assert_eq!(conventions(&addon, &alone), Vec::<String>::new());
        let breaches = [
            (GOOD.replace("'use strict';\n", ""), "'use strict'"),
            (
                GOOD.replace(
                    "const common = require('../../common');\n",
                    "const fs = require('fs');\nconst common = require('../../common');\n",
                ),
                "first require",
            ),
            (GOOD.replace("../../common", "../common"), "first require"),
            (
                GOOD.replace("./build/${common.buildType}/binding", "./binding"),
                "binding",
            ),
            (
                format!("{GOOD}const napi = require('./napi_binding');\n"),
                "binding",
            ),
            (
                GOOD.replace(
                    "const binding = require(`./build/${common.buildType}/binding`);\n",
                    "binding.callbackScope();\n",
                ),
                "binding",
            ),
            (format!("{GOOD}assert.equal(1, 1);\n"), "strict assertion"),
        ];
        for (source, named) in breaches {
            let problems = conventions(&addon, &source);
            assert!(
                problems.iter().any(|p| p.contains(named)),
                "{named}: {problems:?}"
            );
        }
        let helper = format!("{}/helper.js", layout::ADDON_DIR);
        assert_eq!(conventions(&helper, GOOD).len(), 1);
        let module = format!("{}/test-z.mjs", layout::JS_DIR);
        let esm = "// Flags: --expose-internals\n// What it shows.\n\nimport * as common from '../common/index.mjs';\nimport { createRequire } from 'module';\n";
        assert_eq!(conventions(&module, esm), Vec::<String>::new());
        let late = esm.replace(
            "import * as common",
            "import assert from 'assert';\nimport * as common",
        );
        assert_eq!(conventions(&module, &late).len(), 1);
        let js = format!("{}/test-y.js", layout::JS_DIR);
        assert_eq!(
            conventions(&js, &GOOD.replace("../../common", "../common")),
            Vec::<String>::new()
        );
    }
}
