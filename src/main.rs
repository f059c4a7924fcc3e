//! `scopecheck`: the command-line tool (being written).

fn main() {}
