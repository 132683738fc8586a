//! Reading a schedule file into a [`Schedule`]: [`Schedule::apply_text`].
//!
//! ```text
//! file  = { line }
//! line  = [ step | "synthesize" | "sub" PATH "{" | "}" ] [ "#" comment ]
//! PATH  = N { "." N }              child indices from the node the block is in
//! ```
//!
//! Steps are those of [`Step`]'s text form. A `sub` block schedules the node at its path with the
//! lines up to its `}`; `synthesize` completes every open leaf of the schedule (or block) it is
//! in. The whole file is read before any step applies, so a syntax error anywhere applies nothing;
//! every error names its line and column.

use super::step::{Step, Word, parse_step, words};
use super::{Schedule, ScheduleError};

/// One line's instruction, where it is, and for a block its lines.
#[derive(Debug, Clone)]
enum Item {
    Step { step: Step, line: usize, column: usize },
    Synthesize { line: usize, column: usize },
    Sub { path: Vec<usize>, line: usize, column: usize, body: Vec<Item> },
}

impl<'t> Schedule<'t> {
    /// Applies the schedule file `text` (see the module docs) to this schedule.
    ///
    /// # Errors
    /// [`ScheduleError::Syntax`] for a line that is not a step, and [`ScheduleError::AtLine`]
    /// around the refusal of a step that does not apply; the schedule is then unchanged.
    pub fn apply_text(&mut self, text: &str) -> Result<&mut Self, ScheduleError> {
        let items = parse(text)?;
        let mut next = self.clone();
        next.apply_items(&items)?;
        *self = next;
        Ok(self)
    }

    fn apply_items(&mut self, items: &[Item]) -> Result<(), ScheduleError> {
        for item in items {
            match item {
                Item::Step { step, line, column } => {
                    self.step(step).map_err(|e| at(*line, *column, e))?;
                }
                Item::Synthesize { line, column } => {
                    self.complete().map_err(|e| at(*line, *column, e))?;
                }
                Item::Sub { path, line, column, body } => {
                    self.node_at(path).map_err(|e| at(*line, *column, e))?;
                    self.subschedule(path, |sub| sub.apply_items(body))?;
                }
            }
        }
        Ok(())
    }
}

fn at(line: usize, column: usize, source: ScheduleError) -> ScheduleError {
    ScheduleError::AtLine { line, column, source: Box::new(source) }
}

fn syntax(line: usize, column: usize, message: impl Into<String>) -> ScheduleError {
    ScheduleError::Syntax { line, column, message: message.into() }
}

/// The items of a file: blocks nest by `sub ... {` and `}`.
fn parse(text: &str) -> Result<Vec<Item>, ScheduleError> {
    // The open blocks: each with its header's items so far.
    let mut stack: Vec<(Vec<usize>, usize, usize, Vec<Item>)> = Vec::new();
    let mut top: Vec<Item> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let code = raw.split('#').next().unwrap_or("");
        let words = words(code).map_err(|(column, message)| syntax(line, column, message))?;
        let Some(first) = words.first() else { continue };
        let item = match first.text {
            "}" => {
                if let Some(extra) = words.get(1) {
                    return Err(syntax(line, extra.column, "a `}` stands alone on its line"));
                }
                let (path, at_line, column, body) = stack
                    .pop()
                    .ok_or_else(|| syntax(line, first.column, "this `}` closes no `sub` block"))?;
                Item::Sub { path, line: at_line, column, body }
            }
            "sub" => {
                let path = sub_header(&words, line)?;
                stack.push((path, line, first.column, Vec::new()));
                continue;
            }
            "synthesize" => {
                if let Some(extra) = words.get(1) {
                    return Err(syntax(line, extra.column, "`synthesize` takes nothing"));
                }
                Item::Synthesize { line, column: first.column }
            }
            _ => {
                let step = parse_step(&words).map_err(|(column, message)| syntax(line, column, message))?;
                Item::Step { step, line, column: first.column }
            }
        };
        match stack.last_mut() {
            Some((_, _, _, body)) => body.push(item),
            None => top.push(item),
        }
    }
    if let Some((_, line, column, _)) = stack.last() {
        return Err(syntax(*line, *column, "this `sub` block is not closed by a `}`"));
    }
    Ok(top)
}

/// The path of `sub PATH {`.
fn sub_header(words: &[Word<'_>], line: usize) -> Result<Vec<usize>, ScheduleError> {
    let usage = "a block is `sub PATH {` with PATH child indices such as 1.0";
    let end = words.last().map_or(1, |w| w.column + w.text.chars().count());
    let path_word = words.get(1).ok_or_else(|| syntax(line, end, usage))?;
    let path = path_word
        .text
        .split('.')
        .map(|part| part.parse::<usize>().ok())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
        syntax(line, path_word.column, format!("`{}` is not a path: {usage}", path_word.text))
    })?;
    match words.get(2) {
        Some(w) if w.text == "{" => {}
        Some(w) => return Err(syntax(line, w.column, usage)),
        None => return Err(syntax(line, end, usage)),
    }
    if let Some(extra) = words.get(3) {
        return Err(syntax(line, extra.column, usage));
    }
    Ok(path)
}
