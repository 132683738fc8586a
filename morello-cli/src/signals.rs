//! Cancellation from the terminal: Ctrl-C trips one process-wide [`CancelToken`] that every
//! search of the command polls; the search then stops, and the command saves what it solved.

use std::sync::OnceLock;

use morello_search::CancelToken;

/// The process's cancellation token, with the Ctrl-C handler installed on first use.
pub fn cancel_token() -> CancelToken {
    static TOKEN: OnceLock<CancelToken> = OnceLock::new();
    TOKEN
        .get_or_init(|| {
            let token = CancelToken::new();
            let handler = token.clone();
            // If a handler cannot be installed, Ctrl-C kills the process as usual: the table on
            // disk stays valid (writes are atomic), only the unsaved work is lost.
            let _ = ctrlc::set_handler(move || handler.cancel());
            token
        })
        .clone()
}
