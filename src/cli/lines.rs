//! The NDJSON files `enqueue --file` and `import` read: the file (or stdin for `-`) as text, and its
//! lines parsed on all cores.

use std::io::Read;

use jobq::Error;
use jobq::error::Input;

/// Runs `parse_part(first line number, part)` over `text` cut into one run of whole lines per core
/// (one run for a small text), on all cores; the results in text order.
pub fn in_parallel<T: Send>(
    text: &str,
    name: &str,
    parse_part: impl Fn(usize, &str) -> Result<Vec<T>, Error> + Sync,
) -> Vec<Result<Vec<T>, Error>> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    // Small inputs are not worth a thread.
    let parts = if text.len() < 1 << 20 { 1 } else { cores };
    let mut bounds = vec![0];
    for k in 1..parts {
        let target = (text.len() * k / parts).max(*bounds.last().unwrap_or(&0));
        let cut = text[target..].find('\n').map(|i| target + i + 1).unwrap_or(text.len());
        bounds.push(cut);
    }
    bounds.push(text.len());
    bounds.dedup();
    let parse_part = &parse_part;
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let (start, end) = (w[0], w[1]);
                let first_line = text[..start].bytes().filter(|b| *b == b'\n').count();
                let part = &text[start..end];
                scope.spawn(move || parse_part(first_line, part))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::invalid(Input::JobsFile, format!("{name}: reading failed"))))
            })
            .collect()
    })
}

/// The text of `--file`: the file, or stdin for `-`.
pub fn read_text(file: &std::path::Path) -> Result<String, Error> {
    let name = file.display().to_string();
    if name == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Error::invalid_because(Input::JobsFile, "cannot read stdin", e))?;
        Ok(text)
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| Error::invalid_because(Input::JobsFile, format!("cannot read {name}"), e))
    }
}
