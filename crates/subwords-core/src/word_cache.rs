//! The cache of encoded words that every encoder keeps per worker ([`crate::batch::Slots`]): a
//! word's bytes to the run of values it encodes to (ids, or a SentencePiece word's cuts). It only
//! saves time: an encoder that finds nothing in it computes the same values.
//!
//! Layout. A word of at most [`PACKED_LEN`] bytes is keyed by [`pack`], the word itself in a `u128`,
//! so a lookup hashes two words and compares the key inside the table's slot; a longer word is
//! keyed by its own bytes. A key maps to a span of one shared array of values. Nothing is
//! allocated per entry, and an entry of a short word is the bucket alone (32 bytes) plus its
//! values.
//!
//! Few values in the bucket. A word of at most [`Value::Few`]'s length in values (three ids,
//! or one SentencePiece cut) keeps them in its bucket, in the room the span of the shared array
//! takes for longer runs, so its bucket is still 32 bytes and a hit on it costs one cache miss.
//!
//! Words of 16 to [`MEDIUM_LEN`] bytes (a word of Cyrillic or Greek letters past seven of them)
//! have a table of the same kind, keyed by [`pack_medium`] in 48-byte slots; longer words are
//! keyed by their own bytes in a hash map (three or four loads a hit: control bytes, bucket,
//! key, values).
//!
//! A table of our own for the short words. [`Short`] keeps a word's key and entry in one
//! 32-byte slot, probed linearly from a slot its hash names, so a hit reads one line, and the
//! slot is known before the lookup: [`WordCache::prefetch`] lets an encoder fetch it a few words
//! early (our own models do, `Tokenizer::encode_units`). Its iteration order (used only to copy
//! words between tables) is a function of the keys and the insertion history, and reaches no id.
//!
//! The cache starts afresh when it holds [`ENTRIES`] words or [`VALUES`] values, as the maps it
//! replaced did at their entry limit.
//!
//! Two levels. A cache reads a shared [`Table`] first (its `base`, read only), then its own
//! words, and stores what it meets new among its own. On one thread nothing is shared. A batch
//! on more than one thread ([`crate::batch::Slots::streamed`]) shares slot 0's words with the
//! other threads ([`WordCache::share`]), so the threads keep one table of the words met before
//! instead of one each. `share` copies the caller's own words into the shared ones when they are
//! at most [`JOIN`] (and fit), replaces the shared words by them when they outnumber those, and
//! otherwise leaves both to be read, so none are stored once every word has been met.
//!
//! Measured (4 MB of multilingual lines unless said; words of at most 15 bytes are 96-100% of
//! the words met in the benchmark corpora, byte-level spelling):
//! * a `Map<Box<[u8]>, Box<[u32]>>` (two heap blocks per entry: three cache misses a hit on a
//!   cache of 100k+ words) made the lookup 28% of a byte-level tokenizer.json's encode on one
//!   thread, 20% of it the key comparison (`perf`);
//! * copying a hit's values out of the shared array was 12% of our 32k Unigram's encode into an
//!   array, beside the lookup's 34%: hence few values in the bucket;
//! * hashbrown's control bytes then bucket (two lines, the bucket's load 56% of the lookup's
//!   samples) against [`Short`] with the prefetch: our 32k Unigram on one thread 56.7 -> 45.4 ms
//!   into an array, 92.8 -> 76.1 ms into lists; the engines without the prefetch level or faster;
//!   prefetching in the `tokenizer.json` engine made it slower;
//! * one table per thread: each held every word of the batch, and a 2-thread batch cost
//!   1.05-1.3x the CPU time of a 1-thread one (engines with no word cache 1.0x); the shared
//!   table: 0.9-1.2x, our Unigram's speed-up 1.68x -> 1.93x on average (benchmarks/README.md,
//!   "One word table for a batch's threads");
//! * replacing the shared words whenever the caller's own passed [`JOIN`] re-stored 37-47k of
//!   the ~85k words of a byte-level batch at every call; keeping both: three calls (2, 1, 2
//!   threads) 804 M -> 780 M instructions (callgrind).
//! * the limit at 131,072 words: the benchmarks' multilingual and code lines hold 400k and 455k
//!   distinct words, and the cache started afresh within every pass over them; at 524,288 the
//!   sentencepiece face's calls one line at a time on those lines went from 1.56x to 2.05x and
//!   from 1.80x to 2.38x sentencepiece's CPU time (its peak on the code lines 345 -> 393 MB).

use crate::hash::Map;
use crate::huge::HugeTable;
use std::sync::Arc;

/// Words of at most this many bytes are keyed by [`pack`].
pub const PACKED_LEN: usize = 15;
/// Words of more than [`PACKED_LEN`] and at most this many bytes are keyed by [`pack_medium`].
pub const MEDIUM_LEN: usize = 31;
/// Words kept before the cache starts afresh.
pub const ENTRIES: usize = 1 << 19;
/// Values kept before the cache starts afresh (8 per word on average at the entry limit).
pub const VALUES: usize = 1 << 22;
/// Own words that [`WordCache::share`] copies into the shared ones; more stay own, or replace
/// the shared ones when they outnumber them.
pub const JOIN: usize = 1 << 14;

/// The bytes of a short string in the low 15 bytes, its length in the top byte: distinct strings
/// of at most [`PACKED_LEN`] bytes get distinct keys. Built from two overlapping word loads rather
/// than a variable-length copy, which showed up in profiles as a `memmove` call per lookup.
#[inline(always)]
pub fn pack(b: &[u8]) -> u128 {
    fn word8(b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        u64::from_le_bytes(a)
    }
    fn word4(b: &[u8]) -> u64 {
        let mut a = [0u8; 4];
        a.copy_from_slice(&b[..4]);
        u32::from_le_bytes(a) as u64
    }
    let n = b.len().min(PACKED_LEN);
    let (lo, hi) = if n >= 8 {
        // the last 8 bytes, shifted so that only those past the first 8 remain
        let hi = if n > 8 { word8(&b[n - 8..n]) >> ((16 - n) * 8) } else { 0 };
        (word8(b), hi)
    } else if n >= 4 {
        (word4(b) | (word4(&b[n - 4..n]) >> ((8 - n) * 8)) << 32, 0)
    } else {
        (b[..n].iter().enumerate().fold(0u64, |v, (i, &x)| v | (x as u64) << (8 * i)), 0)
    };
    lo as u128 | (hi as u128) << 64 | (n as u128) << 120
}

/// [`pack`] of `s[a..a + len]` (`1 <= len <=` [`PACKED_LEN`]): one 16-byte load and a mask
/// where `s` has 16 bytes from `a`, else [`pack`] (whose branches on the length mispredict on
/// text of mixed word lengths).
#[inline(always)]
pub fn packed_at(s: &[u8], a: usize, len: usize) -> u128 {
    match s.get(a..a + 16) {
        Some(w) => {
            let w = u128::from_le_bytes(w.try_into().unwrap());
            w & LOW_BYTES[len & 15] | (len as u128) << 120
        }
        None => pack(&s[a..a + len]),
    }
}

/// The low `len` bytes set, by `len` (0 to 15), for [`packed_at`]: a 128-bit word shifted by a
/// variable count is about a dozen instructions and a branch on the count, a load from this
/// table one instruction.
const LOW_BYTES: [u128; 16] = {
    let mut masks = [0u128; 16];
    let mut len = 1;
    while len < 16 {
        masks[len] = u128::MAX >> (128 - 8 * len);
        len += 1;
    }
    masks
};

/// The key of a word of `PACKED_LEN + 1 ..= MEDIUM_LEN` bytes: its first 16 bytes, then
/// [`pack`] of the rest (its length in the top byte). Distinct words of those lengths get
/// distinct keys.
#[inline(always)]
pub fn pack_medium(b: &[u8]) -> (u128, u128) {
    debug_assert!(b.len() > PACKED_LEN && b.len() <= MEDIUM_LEN);
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[..16]);
    (u128::from_le_bytes(a), pack(&b[16..]))
}

/// A key of one of the tables of words kept in their slots ([`Short`]).
trait SlotKey: Copy + PartialEq {
    /// The key no word has: a free slot.
    const FREE: Self;
    /// The first slot probed for the key, from the top bits of its hash.
    fn home(self, shift: u32) -> usize;
}

impl SlotKey for u128 {
    // its top byte, a length, would be 255
    const FREE: Self = u128::MAX;
    #[inline(always)]
    fn home(self, shift: u32) -> usize {
        home(self, shift)
    }
}

impl SlotKey for (u128, u128) {
    // the second half's top byte, a length, would be 255
    const FREE: Self = (0, u128::MAX);
    #[inline(always)]
    fn home(self, shift: u32) -> usize {
        home(self.0 ^ self.1.rotate_left(29), shift)
    }
}

/// A value a cache stores: an id, or a SentencePiece cut.
pub trait Value: Copy + Default {
    /// The values a word's bucket holds itself ([`Entry::Few`]): as many as fit in 12 bytes.
    type Few: Copy + Default + Send + Sync + AsRef<[Self]> + AsMut<[Self]>;
}

impl Value for u32 {
    type Few = [u32; 3];
}

impl Value for (u32, u32, u32) {
    type Few = [(u32, u32, u32); 1];
}

/// A word's values: in its bucket, or a span of the table's shared array.
#[derive(Clone, Copy)]
enum Entry<F> {
    Few(u8, F),
    Run(u32, u32),
}

// a short word's bucket (key and entry) stays the 32 bytes it was with a span alone
const _: () = assert!(std::mem::size_of::<(u128, Entry<[u32; 3]>)>() == 32);
const _: () = assert!(std::mem::size_of::<(u128, Entry<[(u32, u32, u32); 1]>)>() == 32);

/// Encoded words: see the module header.
pub struct WordCache<V: Value> {
    /// Words shared by the threads of a batch (read only while shared): see [`WordCache::share`].
    base: Option<Arc<Table<V>>>,
    /// Words this cache's thread stored itself.
    own: Table<V>,
}

impl<V: Value> Default for WordCache<V> {
    fn default() -> Self {
        WordCache { base: None, own: Table::default() }
    }
}

impl<V: Value> WordCache<V> {
    /// The values stored for `word`, if any.
    #[inline]
    pub fn get(&self, word: &[u8]) -> Option<&[V]> {
        if let Some(base) = &self.base {
            if let Some(v) = base.get(word) {
                return Some(v);
            }
        }
        self.own.get(word)
    }

    /// [`WordCache::get`] for a word of at most [`PACKED_LEN`] bytes given as its packed key
    /// ([`pack`]).
    #[inline]
    pub fn get_packed(&self, key: u128) -> Option<&[V]> {
        if let Some(base) = &self.base {
            if let Some(v) = base.get_short(key) {
                return Some(v);
            }
        }
        self.own.get_short(key)
    }

    /// [`WordCache::get`] for a word of `PACKED_LEN + 1 ..= MEDIUM_LEN` bytes given as its key
    /// ([`pack_medium`]).
    #[inline]
    pub fn get_medium(&self, key: (u128, u128)) -> Option<&[V]> {
        if let Some(base) = &self.base {
            if let Some(v) = base.get_medium(key) {
                return Some(v);
            }
        }
        self.own.get_medium(key)
    }

    /// [`WordCache::prefetch`] for a word of `PACKED_LEN + 1 ..= MEDIUM_LEN` bytes given as its
    /// key ([`pack_medium`]).
    #[inline]
    pub fn prefetch_medium(&self, key: (u128, u128)) {
        if let Some(base) = &self.base {
            base.medium.prefetch(key);
        }
        self.own.medium.prefetch(key);
    }

    /// Asks the processor to fetch the slots a word of at most [`PACKED_LEN`] bytes, packed as
    /// `key` ([`pack`]), will be looked up in: the caller looks it up a few words later. Both the
    /// shared and the own table's slot, when each holds words: after a batch on more than one
    /// thread, slot 0 keeps the shared table (often empty) and stores its new words among its
    /// own, and with the shared slot alone fetched its calls one line at a time fetched none.
    #[inline]
    pub fn prefetch(&self, key: u128) {
        if let Some(base) = &self.base {
            base.short.prefetch(key);
        }
        self.own.short.prefetch(key);
    }

    /// [`WordCache::extend_into`] for a word of at most [`PACKED_LEN`] bytes given as its packed
    /// key ([`pack`]).
    #[inline]
    pub fn extend_packed(&self, key: u128, out: &mut Vec<V>) -> bool {
        let found = match &self.base {
            Some(base) => base.get_short(key).or_else(|| self.own.get_short(key)),
            None => self.own.get_short(key),
        };
        match found {
            Some(&[v]) => out.push(v),
            Some(values) => out.extend_from_slice(values),
            None => return false,
        }
        true
    }

    /// Appends `word`'s values to `out` and says whether it had any stored. One value, the
    /// commonest case, is pushed without a copy call.
    #[inline]
    pub fn extend_into(&self, word: &[u8], out: &mut Vec<V>) -> bool {
        match self.get(word) {
            Some(&[v]) => out.push(v),
            Some(values) => out.extend_from_slice(values),
            None => return false,
        }
        true
    }

    /// Stores `values` for `word`, a word not stored yet, among this cache's own words (starting
    /// them afresh first when full).
    pub fn insert(&mut self, word: &[u8], values: &[V]) {
        self.own.insert(word, values);
    }

    /// [`WordCache::insert`] for a word of at most [`PACKED_LEN`] bytes given as its packed key
    /// ([`pack`]).
    pub fn insert_packed(&mut self, key: u128, values: &[V]) {
        self.own.insert_short(key, values);
    }

    /// How many words are stored, shared and own (a word can be in both).
    pub fn len(&self) -> usize {
        self.base.as_ref().map_or(0, |b| b.len()) + self.own.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every word.
    pub fn clear(&mut self) {
        self.base = None;
        self.own.clear();
    }

    /// The words of this cache as a table other threads can read: a handle on its shared words
    /// for [`WordCache::attach`], after its own words have joined them where that is cheap. The
    /// join runs on the calling thread before a batch's other threads start, so it is kept short:
    /// - up to [`JOIN`] own words that fit under the limits beside the shared ones are copied in;
    /// - own words that outnumber the shared ones replace them, moved as a whole (the shared
    ///   ones are then the staler set: a first batch, or text of another kind);
    /// - otherwise both stay as they are. This thread reads the shared words, then its own; the
    ///   other threads store the words they miss among their own, as on one thread.
    ///
    /// While another handle is still out, the shared words cannot change and the own ones stay.
    pub fn share(&mut self) -> Arc<Table<V>> {
        let base = self.base.get_or_insert_with(Default::default);
        if !self.own.is_empty() {
            if let Some(b) = Arc::get_mut(base) {
                if b.len() < self.own.len() {
                    std::mem::swap(b, &mut self.own);
                    self.own.clear();
                } else if self.own.len() <= JOIN
                    && b.len() + self.own.len() <= ENTRIES
                    && b.values.len() + self.own.values.len() <= VALUES
                {
                    b.absorb(&self.own);
                    self.own.clear();
                }
            }
        }
        Arc::clone(base)
    }

    /// Reads `base`'s words before this cache's own ones, until [`WordCache::detach`].
    pub fn attach(&mut self, base: Arc<Table<V>>) {
        self.base = Some(base);
    }

    /// Lets go of the words attached.
    pub fn detach(&mut self) {
        self.base = None;
    }
}

/// The words of at most [`PACKED_LEN`] bytes: open addressing on their packed keys, probed linearly
/// from the slot the key's hash names. A slot is the key and its entry, 32
/// bytes, so a hit reads one cache line, and the slot a word will be looked up in is known
/// before it is looked up ([`Short::prefetch`]). At most three quarters full: at half, a
/// batch's 85k words took 8 MB of slots where hashbrown's table took 4 MB, and a batch of byte-level
/// lines ran 3-6% slower for it. The table of a large batch outgrows
/// the core's cache, and the load of a word's slot was most of a lookup's time; hashbrown's
/// table, which this replaced, does not say where a key's bucket is.
struct Short<F: Copy, K: Copy = u128> {
    slots: HugeTable<(K, Entry<F>)>,
    len: usize,
    /// 64 less log2 of the slot count: a hash's top bits pick the slot
    shift: u32,
}

impl<F: Copy, K: Copy> Default for Short<F, K> {
    fn default() -> Self {
        Short { slots: HugeTable::from_slice(&[]), len: 0, shift: 64 }
    }
}

/// The first slot probed for `key`: a multiplicative hash of both halves, its top bits.
#[inline(always)]
fn home(key: u128, shift: u32) -> usize {
    let (lo, hi) = (key as u64, (key >> 64) as u64);
    // a folded multiply of the two halves (each mixed with a constant first), as wyhash does
    let m = ((lo ^ 0x9E37_79B9_7F4A_7C15) as u128) * ((hi ^ 0xD6E8_FEB8_6659_FD93) as u128);
    let h = (m as u64) ^ ((m >> 64) as u64);
    // a shift of 64 (no slots) would overflow: `get` and `prefetch` look only when there are slots
    (h >> shift) as usize
}

impl<F: Copy, K: SlotKey> Short<F, K> {
    #[inline]
    fn get(&self, key: K) -> Option<&Entry<F>> {
        if self.len == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = key.home(self.shift);
        loop {
            let slot = &self.slots[i];
            if slot.0 == key {
                return Some(&slot.1);
            }
            if slot.0 == K::FREE {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Asks the processor to fetch the slot `key` is looked up in first, so that a lookup a
    /// few words later finds it in the cache. Only a hint: nothing is read here.
    #[inline]
    fn prefetch(&self, key: K) {
        if self.len == 0 {
            return;
        }
        let at = self.slots.as_ptr().wrapping_add(key.home(self.shift));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch never faults and reads nothing the program sees; `at` is a slot
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// Stores `entry` for `key`, replacing the key's entry if it has one.
    fn insert(&mut self, key: K, entry: Entry<F>) {
        debug_assert!(key != K::FREE);
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = key.home(self.shift);
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == K::FREE {
                *slot = (key, entry);
                self.len += 1;
                return;
            }
            if slot.0 == key {
                slot.1 = entry;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Twice the slots (1024 at first), every key placed again: in the first free slot from
    /// its home, with no comparison of keys (they are distinct) and no check of the load.
    /// Against placing them by [`Short::insert`]: a fresh rank encoder, 1 MB of multilingual
    /// text in 16 KB chunks (o200k), 4.23 M -> 3.22 M instructions in the growths, most of the
    /// rest writing the new slots free (callgrind).
    #[cold]
    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(1024);
        let old =
            std::mem::replace(&mut self.slots, HugeTable::filled(n, (K::FREE, Entry::Run(0, 0))));
        self.shift = 64 - n.trailing_zeros();
        let mask = n - 1;
        for &(key, entry) in old.iter() {
            if key != K::FREE {
                let mut i = key.home(self.shift);
                while self.slots[i].0 != K::FREE {
                    i = (i + 1) & mask;
                }
                self.slots[i] = (key, entry);
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = (K, &Entry<F>)> {
        self.slots.iter().filter(|s| s.0 != K::FREE).map(|s| (s.0, &s.1))
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Forgets every word. Every slot is written free, so the slots kept are only as many as
    /// the words held needed: a clear of a sparse table starts a smaller one. A 2-thread
    /// batch's [`WordCache::share`] clears the calling thread's own words at every call (a few
    /// thousand, after its table had held a whole batch's words once), and writing all of
    /// 2^18 slots free (8 MB, where hashbrown wrote 256 KB of control bytes) was serial work
    /// before the other threads started.
    fn clear(&mut self) {
        if self.len == 0 {
            return;
        }
        let want = (self.len + self.len / 3 + 1).next_power_of_two().max(1024);
        if want >= self.slots.len() {
            self.slots.fill((K::FREE, Entry::Run(0, 0)));
        } else {
            self.slots = HugeTable::filled(want, (K::FREE, Entry::Run(0, 0)));
            self.shift = 64 - want.trailing_zeros();
        }
        self.len = 0;
    }
}

/// A table of encoded words: the module header's layout.
pub struct Table<V: Value> {
    short: Short<V::Few>,
    medium: Short<V::Few, (u128, u128)>,
    long: Map<Box<[u8]>, Entry<V::Few>>,
    /// The values of the words with more than [`Value::Few`] holds.
    values: Vec<V>,
}

impl<V: Value> Default for Table<V> {
    fn default() -> Self {
        Table {
            short: Short::default(),
            medium: Short::default(),
            long: Map::default(),
            values: Vec::new(),
        }
    }
}

impl<V: Value> Table<V> {
    #[inline]
    fn get(&self, word: &[u8]) -> Option<&[V]> {
        let entry = if word.len() <= PACKED_LEN {
            self.short.get(pack(word))
        } else if word.len() <= MEDIUM_LEN {
            self.medium.get(pack_medium(word))
        } else {
            self.long.get(word)
        };
        entry.map(|e| self.values_of(e))
    }

    /// The values of the word of `PACKED_LEN + 1 ..= MEDIUM_LEN` bytes keyed `key`.
    #[inline]
    fn get_medium(&self, key: (u128, u128)) -> Option<&[V]> {
        self.medium.get(key).map(|e| self.values_of(e))
    }

    /// The values of the short word packed as `key`.
    #[inline]
    fn get_short(&self, key: u128) -> Option<&[V]> {
        self.short.get(key).map(|e| self.values_of(e))
    }

    #[inline]
    fn values_of<'a>(&'a self, e: &'a Entry<V::Few>) -> &'a [V] {
        match e {
            Entry::Few(n, few) => &few.as_ref()[..*n as usize],
            &Entry::Run(a, b) => &self.values[a as usize..b as usize],
        }
    }

    fn insert(&mut self, word: &[u8], values: &[V]) {
        if word.len() <= PACKED_LEN {
            return self.insert_short(pack(word), values);
        }
        if let Some(entry) = self.make_room(values) {
            if word.len() <= MEDIUM_LEN {
                self.medium.insert(pack_medium(word), entry);
            } else {
                self.long.insert(word.into(), entry);
            }
        }
    }

    fn insert_short(&mut self, key: u128, values: &[V]) {
        if let Some(entry) = self.make_room(values) {
            self.short.insert(key, entry);
        }
    }

    /// The entry of `values`, the table started afresh first when full; None for a run too
    /// long to keep.
    fn make_room(&mut self, values: &[V]) -> Option<Entry<V::Few>> {
        if values.len() > VALUES {
            return None;
        }
        if self.len() >= ENTRIES || self.values.len() + values.len() > VALUES {
            self.clear();
        }
        Some(self.entry(values))
    }

    /// `values` in a bucket's entry where they fit, else pushed onto the shared array.
    fn entry(&mut self, values: &[V]) -> Entry<V::Few> {
        let mut few = V::Few::default();
        if values.len() <= few.as_ref().len() {
            few.as_mut()[..values.len()].copy_from_slice(values);
            return Entry::Few(values.len() as u8, few);
        }
        let start = self.values.len() as u32;
        self.values.extend_from_slice(values);
        Entry::Run(start, self.values.len() as u32)
    }

    /// Every word of `other`, its values copied (a word stored in both keeps `other`'s).
    fn absorb(&mut self, other: &Table<V>) {
        for (key, e) in other.short.iter() {
            let entry = other.moved(e, self);
            self.short.insert(key, entry);
        }
        for (key, e) in other.medium.iter() {
            let entry = other.moved(e, self);
            self.medium.insert(key, entry);
        }
        for (key, e) in &other.long {
            let entry = other.moved(e, self);
            self.long.insert(key.clone(), entry);
        }
    }

    /// This table's entry `e` as an entry of `to`.
    fn moved(&self, e: &Entry<V::Few>, to: &mut Table<V>) -> Entry<V::Few> {
        match *e {
            Entry::Few(..) => *e,
            Entry::Run(a, b) => to.entry(&self.values[a as usize..b as usize]),
        }
    }

    fn len(&self) -> usize {
        self.short.len() + self.medium.len() + self.long.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn clear(&mut self) {
        self.short.clear();
        self.medium.clear();
        self.long.clear();
        self.values.clear();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packed_at_equals_pack() {
        // every length at every offset of a buffer with 16 bytes to spare past some offsets and
        // not past others (the two ways of `packed_at`), against `pack`
        let buf: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37).wrapping_add(1)).collect();
        for a in 0..buf.len() {
            for len in 1..=PACKED_LEN.min(buf.len() - a) {
                assert_eq!(packed_at(&buf, a, len), pack(&buf[a..a + len]), "{a} {len}");
            }
        }
    }

    use super::*;

    #[test]
    fn pack_is_injective_on_short_strings() {
        let mut seen = std::collections::HashMap::new();
        let alphabet = [0u8, 1, 0x80, 0xff];
        for n in 0..=PACKED_LEN {
            for seed in 0..64u32 {
                let s: Vec<u8> =
                    (0..n).map(|i| alphabet[((seed >> (i % 6)) as usize + i) % 4]).collect();
                if let Some(old) = seen.insert(pack(&s), s.clone()) {
                    assert_eq!(old, s);
                }
            }
        }
        let s: Vec<u8> = (1..=15).collect();
        let key = pack(&s).to_le_bytes();
        assert_eq!(&key[..15], &s[..]);
        assert_eq!(key[15], 15);
        for n in 0..=15 {
            let k = pack(&s[..n]).to_le_bytes();
            assert_eq!(&k[..n], &s[..n]);
            assert!(k[n..15].iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn words_short_and_long_keep_their_own_values() {
        let mut c: WordCache<u32> = WordCache::default();
        // 15 and 16 bytes: one on each side of the packed keys; "" and a word that is a prefix
        // of another with a zero byte after it (the packed key pads with zeros)
        // and 31 and 32 bytes, each side of the medium keys, and a medium word that is a
        // prefix of another with a zero byte after it
        let words: [&[u8]; 11] = [
            b"",
            b"a",
            b"a\0",
            b"fifteen bytes!!",
            b"sixteen bytes!!!",
            b"sixteen bytes!!?",
            b"sixteen bytes!!!\0",
            b"thirty-one bytes, the last one.",
            b"thirty-one bytes, the last one?",
            b"thirty-two bytes: the first long",
            b"thirty-two bytes: the first lonG",
        ];
        for (i, w) in words.iter().enumerate() {
            assert_eq!(c.get(w), None);
            c.insert(w, &vec![i as u32; i]);
        }
        assert_eq!(c.len(), words.len());
        for (i, w) in words.iter().enumerate() {
            assert_eq!(c.get(w), Some(&vec![i as u32; i][..]), "{:?}", String::from_utf8_lossy(w));
            let mut out = vec![99];
            assert!(c.extend_into(w, &mut out));
            assert_eq!(out[1..], vec![i as u32; i][..]);
        }
        let mut out = Vec::new();
        assert!(!c.extend_into(b"b", &mut out) && out.is_empty());
        c.clear();
        assert!(c.is_empty() && c.get(b"a").is_none() && c.get(b"sixteen bytes!!!").is_none());
        assert!(c.get(b"thirty-one bytes, the last one.").is_none());
    }

    /// The open-addressing table of short words: keys whose home slot is the same (found by
    /// trying) probe on, past the last slot to the first; a key stored twice keeps the later
    /// entry; a clear of a sparse table starts a smaller one that works as before.
    #[test]
    fn short_words_probe_on_past_the_end_and_a_sparse_clear_shrinks() {
        let mut t: Short<[u32; 3]> = Short::default();
        assert!(t.get(pack(b"a")).is_none());
        t.prefetch(pack(b"a")); // nothing to fetch: no slots yet
        t.insert(pack(b"a"), Entry::Run(0, 1));
        assert_eq!(t.slots.len(), 1024);
        // three more keys with the last slot as their home, and one with the first
        let (last, shift) = (t.slots.len() - 1, t.shift);
        let mut at_last =
            (0u32..).map(|i| pack(&i.to_le_bytes())).filter(|&k| home(k, shift) == last);
        let keys: Vec<u128> = at_last.by_ref().take(3).collect();
        let first = (0u32..)
            .map(|i| pack(&(i | 1 << 31).to_le_bytes()))
            .find(|&k| home(k, shift) == 0)
            .unwrap();
        for (n, &k) in keys.iter().enumerate() {
            t.insert(k, Entry::Run(n as u32, 9));
        }
        t.insert(first, Entry::Run(7, 7));
        // the second and third wrapped to slots 0 and 1; `first` went on to slot 2
        assert_eq!(t.slots[0].0, keys[1]);
        assert_eq!(t.slots[2].0, first);
        for (n, &k) in keys.iter().enumerate() {
            assert!(matches!(t.get(k), Some(&Entry::Run(a, 9)) if a == n as u32));
        }
        assert!(matches!(t.get(first), Some(&Entry::Run(7, 7))));
        t.insert(keys[2], Entry::Run(5, 6));
        assert!(matches!(t.get(keys[2]), Some(&Entry::Run(5, 6))));
        assert_eq!(t.len(), 5);
        // a key never stored, whose probe passes the wrapped ones, is not found
        let absent = at_last.next().unwrap();
        assert!(t.get(absent).is_none());
        // grow, then clear: 3000 keys and the 5 above need 4096 slots (at most three quarters
        // full), and a clear of them keeps the slots; 5 keys need the smallest table
        for i in 0..3000u32 {
            t.insert(pack(format!("w{i}").as_bytes()), Entry::Run(i, i));
        }
        assert_eq!(t.slots.len(), 4096);
        // every key placed again by each growth (1024 -> 2048 -> 4096 slots), the count kept
        assert_eq!(t.len(), 3005);
        for i in 0..3000u32 {
            let e = t.get(pack(format!("w{i}").as_bytes()));
            assert!(matches!(e, Some(&Entry::Run(a, b)) if (a, b) == (i, i)), "w{i}");
        }
        assert!(matches!(t.get(first), Some(&Entry::Run(7, 7))));
        t.clear();
        assert_eq!((t.len(), t.slots.len()), (0, 4096), "as many slots as the words held need");
        assert!(t.get(pack(b"w7")).is_none());
        for i in 0..5u32 {
            t.insert(pack(format!("v{i}").as_bytes()), Entry::Run(i, i));
        }
        t.clear();
        assert_eq!((t.len(), t.slots.len()), (0, 1024), "a sparse table starts small");
        t.insert(pack(b"v3"), Entry::Run(3, 4));
        assert!(matches!(t.get(pack(b"v3")), Some(&Entry::Run(3, 4))));
        assert!(t.get(pack(b"v4")).is_none());
        assert_eq!(t.iter().count(), 1);
    }

    #[test]
    fn a_full_cache_starts_afresh() {
        let mut c: WordCache<u32> = WordCache::default();
        for i in 0..ENTRIES as u32 {
            c.insert(&i.to_le_bytes(), &[i]);
        }
        assert_eq!(c.len(), ENTRIES);
        assert_eq!(c.get(&7u32.to_le_bytes()), Some(&[7][..]));
        c.insert(b"one more", &[1, 2, 3, 4]);
        assert_eq!(c.len(), 1);
        assert_eq!(c.get(&7u32.to_le_bytes()), None);
        assert_eq!(c.get(b"one more"), Some(&[1, 2, 3, 4][..]));
        // by values too, and a run longer than the whole cache is not stored
        c.insert(b"long run", &vec![5; VALUES - 3]);
        assert_eq!(c.len(), 1, "the run did not fit beside the first word's four values");
        assert_eq!(c.get(b"long run").map(<[u32]>::len), Some(VALUES - 3));
        c.insert(b"too long", &vec![6; VALUES + 1]);
        assert_eq!(c.get(b"too long"), None);
        assert_eq!(c.get(b"long run").map(<[u32]>::len), Some(VALUES - 3));
        // values kept in their buckets count toward no limit but the entries'
        c.insert(b"few", &[7, 8, 9]);
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(b"few"), Some(&[7, 8, 9][..]));
    }

    #[test]
    fn shared_words_are_read_first_and_joined_at_the_next_share() {
        let mut main: WordCache<u32> = WordCache::default();
        main.insert(b"a", &[1]);
        main.insert(b"longer than fifteen bytes", &[2, 3]);
        // nothing shared yet: the own words move over whole
        let base = main.share();
        assert_eq!(base.len(), 2);
        assert_eq!(main.len(), 2, "the words are now the shared ones, not in both");
        let mut worker: WordCache<u32> = WordCache::default();
        worker.attach(Arc::clone(&base));
        assert_eq!(worker.get(b"a"), Some(&[1][..]));
        assert_eq!(worker.get(b"longer than fifteen bytes"), Some(&[2, 3][..]));
        // a word either thread meets new goes to its own words only
        worker.insert(b"b", &[4]);
        main.insert(b"c", &[5, 6, 7, 8]);
        main.insert(b"d", &[9]);
        assert_eq!(main.get(b"b"), None);
        assert_eq!(worker.get(b"c"), None);
        assert_eq!(main.get(b"c"), Some(&[5, 6, 7, 8][..]));
        // while a handle is out, share cannot join the own words into the shared ones
        drop(main.share());
        assert_eq!(base.get(b"c"), None);
        worker.detach();
        assert_eq!(worker.get(b"a"), None);
        assert_eq!(worker.get(b"b"), Some(&[4][..]));
        drop(base);
        // every handle back: the own words join the shared ones, values copied
        let base = main.share();
        assert_eq!(base.get(b"c"), Some(&[5, 6, 7, 8][..]));
        assert_eq!(base.get(b"d"), Some(&[9][..]));
        assert_eq!(base.get(b"longer than fifteen bytes"), Some(&[2, 3][..]));
        assert_eq!(main.len(), 4);
        drop(base);
        main.clear();
        assert!(main.is_empty() && main.get(b"a").is_none());
    }

    #[test]
    fn own_words_that_outnumber_the_shared_ones_replace_them() {
        let mut main: WordCache<u32> = WordCache::default();
        main.insert(b"old", &[1]);
        drop(main.share());
        for i in 0..=JOIN as u32 {
            main.insert(&i.to_le_bytes(), &[i, i]);
        }
        let base = main.share();
        assert_eq!(base.len(), JOIN + 1);
        assert_eq!(base.get(&7u32.to_le_bytes()), Some(&[7, 7][..]));
        assert_eq!(main.get(b"old"), None, "the old shared words were let go, not copied");
        assert_eq!(main.len(), JOIN + 1);
    }

    /// A 2-thread batch's caller meets about half of the batch's words new at every call (the
    /// other thread met them before): more than `JOIN`. Replacing the shared words by them would
    /// make the next call meet the other half new again (37-47k of the ~85k words of a 4 MB
    /// batch encoded afresh at every call). Own words too many to copy and fewer than the shared
    /// ones stay own, and both are read.
    #[test]
    fn many_own_words_beside_more_shared_ones_are_all_kept() {
        let mut main: WordCache<u32> = WordCache::default();
        let n = 2 * JOIN as u32 + 10;
        for i in 0..n {
            main.insert(&i.to_le_bytes(), &[i]);
        }
        drop(main.share());
        for i in n..n + JOIN as u32 + 1 {
            main.insert(&i.to_le_bytes(), &[i, i]);
        }
        let base = main.share();
        assert_eq!(base.len(), n as usize, "the shared words stay, nothing copied in");
        assert_eq!(main.len(), n as usize + JOIN + 1);
        for i in [0, n - 1] {
            assert_eq!(main.get(&i.to_le_bytes()), Some(&[i][..]));
        }
        for i in [n, n + JOIN as u32] {
            assert_eq!(main.get(&i.to_le_bytes()), Some(&[i, i][..]));
            assert_eq!(base.get(&i.to_le_bytes()), None);
        }
        // and again at the next share: still every word, none encoded afresh
        drop(base);
        let base = main.share();
        assert_eq!(base.len(), n as usize);
        assert_eq!(main.get(&(n + 3).to_le_bytes()), Some(&[n + 3, n + 3][..]));
    }

    #[test]
    fn own_words_that_do_not_fit_beside_the_shared_ones_stay_own() {
        let mut main: WordCache<u32> = WordCache::default();
        for i in 0..(ENTRIES - 5) as u32 {
            main.insert(&i.to_le_bytes(), &[i]);
        }
        drop(main.share());
        for i in 0..10u32 {
            main.insert(&(u32::MAX - i).to_le_bytes(), &[i]);
        }
        let base = main.share();
        assert_eq!(base.len(), ENTRIES - 5, "not cleared to make room");
        assert_eq!(main.get(&3u32.to_le_bytes()), Some(&[3][..]));
        assert_eq!(main.get(&(u32::MAX - 4).to_le_bytes()), Some(&[4][..]));
    }
}
