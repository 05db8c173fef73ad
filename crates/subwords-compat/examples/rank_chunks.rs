//! Encodes length-prefixed texts with a fresh rank encoder, for callgrind (`--toggle-collect=*run_pass*`).
use subwords_compat::tiktoken::{Pattern, RankBpe};

#[inline(never)]
fn run_pass(bpe: &RankBpe, texts: &[String]) -> u64 {
    let mut h = 0u64;
    for t in texts {
        for id in bpe.encode(t, &[]) {
            h = h.wrapping_mul(1_000_003).wrapping_add(id as u64);
        }
    }
    h
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (ranks, pat, input) = (&a[1], &a[2], &a[3]);
    let passes: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(1);
    let pat = if pat == "o200k" { Pattern::O200k } else { Pattern::Cl100k };
    let data = std::fs::read(input).unwrap();
    let mut texts = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let n = u32::from_le_bytes(data[i..i + 4].try_into().unwrap()) as usize;
        texts.push(String::from_utf8(data[i + 4..i + 4 + n].to_vec()).unwrap());
        i += 4 + n;
    }
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let file = std::fs::read(ranks).unwrap();
    let mut best = f64::MAX;
    let mut h = 0;
    for _ in 0..passes {
        let bpe = RankBpe::from_rank_file(&file, vec![], pat).unwrap();
        bpe.encode("warm up", &[]);
        let t0 = std::time::Instant::now();
        h = run_pass(&bpe, &texts);
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("{} bytes, digest {h:016x}, best {:.1} MB/s", bytes, bytes as f64 / best / 1e6);
}
