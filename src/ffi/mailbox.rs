//! A mailbox that kernels write straight into host memory ([`Mailbox`]), so that a blocking
//! call learns its result without a read command or an event.

use super::pinned::map_host_memory;
use super::{ClResult, Owned};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::memory::Buffer as ClBuffer;
use std::ptr;
use std::sync::atomic::{fence, Ordering};

/// Words of a mailbox: the value (8 bytes: any 4- or 8-byte element), the sequence number
/// of the post that wrote it, and padding.
const WORDS: usize = 4;
/// Where the sequence number sits (after the value's 8 bytes).
const SEQ: usize = 2;

/// Pinned host memory (a `CL_MEM_ALLOC_HOST_PTR` buffer mapped once) whose host address a
/// kernel writes through a `ulong` argument cast to a pointer: on NVIDIA's driver the device
/// reaches pinned memory at its host address (unified addressing), which clgroups checks on a
/// private context before a mailbox is used (`algorithms::post`). A post writes the value at
/// byte 0, then — after a system-scope fence — its sequence number at byte 8; [`Mailbox::poll`]
/// returns the value once the number is the one awaited, so a stale or torn value is never
/// read. Dropped while a post may still come, the memory is leaked rather than freed under
/// the device.
pub struct Mailbox {
    mem: Option<Owned<ClBuffer<u32>>>,
    ptr: *mut u32,
    /// The map's event until it has completed.
    map: Option<Owned<Event>>,
    /// Whether a post was launched and not yet seen.
    awaited: bool,
}

// SAFETY: `ptr` points into the mapped memory of `mem`, which the value owns; the memory is
// only read, through volatile loads, and only by `&self` methods that tolerate concurrent
// device writes (the sequence number guards the value).
unsafe impl Send for Mailbox {}
// SAFETY: as above.
unsafe impl Sync for Mailbox {}

impl Mailbox {
    /// A mailbox in `ctx`, mapped (non-blocking) through `q`: usable once [`Mailbox::mapped`].
    pub fn new(ctx: &ClContext, q: &CommandQueue) -> ClResult<Self> {
        use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE};
        let (mem, ptr, map) = map_host_memory(ctx, q, WORDS, CL_MAP_READ | CL_MAP_WRITE)?;
        Ok(Mailbox {
            mem: Some(Owned::new(mem)),
            ptr,
            map: Some(map),
            awaited: false,
        })
    }

    /// The map's event while it is pending (wait for it before the first post).
    pub fn map_event(&self) -> Option<&Event> {
        self.map.as_deref()
    }

    /// Whether the map has completed (then the mailbox is ready for posts). Its words are
    /// zeroed then: a fresh `CL_MEM_ALLOC_HOST_PTR` allocation holds whatever its pages held
    /// before, and a stale 1 at the sequence number's place passed for the first post (a
    /// reduce on the second of two H200s returned 1 for its first call after a merged launch:
    /// the driver had reused pinned pages). Posts number from 1, so zeroed words hold none.
    pub fn mapped(&mut self) -> ClResult<bool> {
        if let Some(ev) = &self.map {
            if ev.command_execution_status()?.0 != CL_COMPLETE {
                return Ok(false);
            }
            self.map = None;
            for w in 0..WORDS {
                // SAFETY: `ptr` points to WORDS mapped u32s that live as long as `self`; no
                // post has been launched yet (posts need the map complete), so nothing else
                // writes them.
                unsafe { ptr::write_volatile(self.ptr.add(w), 0) };
            }
            fence(Ordering::SeqCst);
        }
        Ok(true)
    }

    /// The address a kernel writes to (the host address of the mapped memory).
    pub fn address(&self) -> u64 {
        self.ptr as u64
    }

    /// Notes that a post is on its way (until [`Mailbox::poll`] sees it, dropping the mailbox
    /// leaks its memory).
    pub fn expect_post(&mut self) {
        self.awaited = true;
    }

    /// The value posted with sequence number `seq`, if it has arrived: the value's two words
    /// (the low 4 bytes first).
    pub fn poll(&mut self, seq: u32) -> Option<[u32; 2]> {
        if self.map.is_some() {
            return None;
        }
        // SAFETY: `ptr` points to WORDS mapped u32s that live as long as `self`; volatile
        // loads, as the device may write them at any time.
        let got = unsafe { ptr::read_volatile(self.ptr.add(SEQ)) };
        if got != seq {
            return None;
        }
        // The value was written before the sequence number (system-scope fence on the device):
        // read it after.
        fence(Ordering::Acquire);
        self.awaited = false;
        // SAFETY: as above.
        Some(unsafe {
            [
                ptr::read_volatile(self.ptr),
                ptr::read_volatile(self.ptr.add(1)),
            ]
        })
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        if self.map.is_some() || self.awaited {
            // The map or a post may still write the memory: never free it.
            std::mem::forget(self.mem.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Mailbox, SEQ};
    use crate::Queue;

    /// Whatever the pinned pages held before (here a 1 written where the sequence number sits,
    /// as a reused allocation may hold) never passes for a post.
    #[test]
    fn stale_words_never_pass_for_the_first_post() {
        let Some(device) = crate::device::test_device() else {
            return;
        };
        let q = Queue::new(&device).expect("a queue");
        let mut mailbox = Mailbox::new(q.context().raw(), q.raw()).expect("a mailbox");
        if let Some(map) = mailbox.map_event() {
            map.wait().expect("the map");
        }
        // SAFETY: the map completed: `ptr` points to the mailbox's mapped words.
        unsafe {
            std::ptr::write_volatile(mailbox.ptr, 1);
            std::ptr::write_volatile(mailbox.ptr.add(SEQ), 1);
        }
        assert!(mailbox.mapped().expect("map status"));
        assert_eq!(mailbox.poll(1), None);
    }
}
