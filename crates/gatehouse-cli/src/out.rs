//! Writing to stdout. `println!` panics when the reader goes away
//! (`gatehouse replay FILE | head`); like other Unix tools, `gatehouse`
//! then simply stops. Every write is a whole line, so nothing half-done is
//! left behind, and the engine acknowledges each change only after it is
//! committed, so stopping mid-demo loses nothing that was reported.

use std::fmt;
use std::io::{ErrorKind, Write};

/// Prints a line to stdout, stopping quietly if stdout was closed.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// Writes `args` to stdout; see the module documentation.
pub fn write(args: fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        // Nowhere left to report to but stderr.
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(3);
    }
}
