//! Reading trace files: whole ([`load_trace`]), or step by step
//! ([`TraceFile`]) for the tools that run a trace as they read it (`run`,
//! `replay`), whose memory is then what the model holds, not the trace.

use super::CliError;
use model::vocab::trace::{self, Reader, Step, Trace};
use model::vocab::{NodeVersion, Op};
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

fn read_error(file: &Path, source: std::io::Error) -> CliError {
    CliError::Read {
        file: file.to_path_buf(),
        source,
    }
}

fn open(file: &Path) -> Result<Reader<BufReader<File>>, CliError> {
    let f = File::open(file).map_err(|e| read_error(file, e))?;
    Ok(Reader::new(BufReader::with_capacity(1 << 16, f)))
}

/// Where [`TraceFile`] reads its steps: a regular file, opened again for
/// each pass, or the text of anything else (a pipe, `/dev/stdin`, a
/// process substitution), read once and held, since a second open of a
/// pipe finds it empty.
#[derive(Debug)]
enum Source {
    /// A regular file: read again.
    File,
    /// The whole input, read once.
    Held(Vec<u8>),
}

impl Source {
    /// A regular `file` stays on disk; anything else is read whole now.
    fn of(file: &Path) -> Result<Source, CliError> {
        let meta = std::fs::metadata(file).map_err(|e| read_error(file, e))?;
        if meta.is_file() {
            return Ok(Source::File);
        }
        let mut text = Vec::new();
        File::open(file)
            .and_then(|mut f| f.read_to_end(&mut text))
            .map_err(|e| read_error(file, e))?;
        Ok(Source::Held(text))
    }

    /// A reader of the steps from the start.
    fn reader(&self, file: &Path) -> Result<Reader<Box<dyn BufRead + '_>>, CliError> {
        let input: Box<dyn BufRead + '_> = match self {
            Source::File => {
                let f = File::open(file).map_err(|e| read_error(file, e))?;
                Box::new(BufReader::with_capacity(1 << 16, f))
            }
            Source::Held(text) => Box::new(Cursor::new(text.as_slice())),
        };
        Ok(Reader::new(input))
    }
}

fn at(file: &Path, e: trace::ParseError) -> CliError {
    CliError::At {
        file: file.to_path_buf(),
        line: e.line,
        column: e.column,
        message: e.message,
    }
}

/// Read and parse the trace in `file`; errors name the file, line and column.
pub fn load_trace(file: &Path) -> Result<Trace, CliError> {
    let steps = open(file)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| at(file, e))?;
    Ok(Trace { steps })
}

/// A trace file checked whole, then read again step by step: a parse error
/// anywhere is reported before anything runs, and no more than a step is
/// held at a time. Input that is not a regular file (a pipe) is read once
/// and its text held: its memory is then the trace's size.
#[derive(Debug)]
pub struct TraceFile {
    file: PathBuf,
    source: Source,
    /// The node version put before the first op (`--node-version`, when the
    /// trace names none itself).
    prepend: Option<NodeVersion>,
    /// The trace's steps.
    pub steps: usize,
}

impl TraceFile {
    /// Check the trace in `file` as it runs with `--node-version`
    /// ([`super::on_node_version`]'s rule): every line parses, and a node version the
    /// trace names is the given one.
    pub fn open(file: &Path, version: Option<NodeVersion>) -> Result<TraceFile, CliError> {
        let mut steps = 0;
        let mut names_version = false;
        let source = Source::of(file)?;
        for step in source.reader(file)? {
            let step = step.map_err(|e| at(file, e))?;
            steps += 1;
            if let Op::NodeVersion(v) = step.op {
                names_version = true;
                if let Some(given) = version.filter(|g| *g != v) {
                    return Err(CliError::At {
                        file: file.to_path_buf(),
                        line: step.line,
                        column: 1,
                        message: format!(
                            "the trace says `{}`, and --node-version {given} was given",
                            step.op
                        ),
                    });
                }
            }
        }
        Ok(TraceFile {
            file: file.to_path_buf(),
            source,
            prepend: version.filter(|_| !names_version),
            steps,
        })
    }

    /// The steps, read from the file again, or from the text held
    /// (`node-version V` first, as
    /// line 0, when `--node-version` was given and the trace names no
    /// node version).
    pub fn steps(&self) -> Result<impl Iterator<Item = Result<Step, CliError>> + '_, CliError> {
        let first = self.prepend.map(|v| {
            Ok(Step {
                line: 0,
                op: Op::NodeVersion(v),
                expected: Vec::new(),
            })
        });
        let rest = (self.source.reader(&self.file)?).map(|s| s.map_err(|e| at(&self.file, e)));
        Ok(first.into_iter().chain(rest))
    }
}
