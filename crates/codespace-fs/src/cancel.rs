//! [`Cancel`]: the flag a caller raises to stop a long walk or search early.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared stop flag: clones see the same flag. Raised by whoever owns the request (a
/// client's cancellation), polled by the walk and the search between units of work.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is not raised.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Raises the flag; every clone sees it.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Two handles are equal when they share one flag.
impl PartialEq for Cancel {
    fn eq(&self, other: &Cancel) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cancel {}
