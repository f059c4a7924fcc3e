//! `scopecheck`: the command-line tool (see [`scopecheck::cli`]).

fn main() -> std::process::ExitCode {
    scopecheck::cli::main()
}
