//! A BERT encoder's forward pass on the CPU, for sentence embeddings.
//!
//! candle ran all-MiniLM-L6-v2 at a third of sentence-transformers' speed: a batch was padded to its
//! longest text, attention ran as many small batched products, and every element-wise step was a
//! pass of its own over freshly allocated tensors. Here the texts of a pass are packed one after
//! another with no padding (attention runs per text and head, both cores taking turns), the four
//! large products per layer run on `gemm` over both cores with their bias and residual read into
//! the product, and the element-wise steps (GELU, layer norm, softmax) run row by row in place.
//!
//! Only what sentence-embedding models of the BERT family use: absolute positions, GELU (exact or
//! tanh) or ReLU, mean or CLS pooling. Weights are read once into row-major `f32` matrices.

// `gemm` takes raw pointers and strides; each call says why it stays inside its buffers.
#![allow(unsafe_code)]

use std::collections::HashMap;

use rayon::prelude::*;
use serde::Deserialize;

/// `config.json` of a BERT model: the fields the forward pass reads.
#[derive(Debug, Deserialize)]
pub(super) struct BertConfig {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    #[serde(default = "default_act")]
    hidden_act: String,
    #[serde(default = "default_eps")]
    layer_norm_eps: f32,
    max_position_embeddings: usize,
    #[serde(default = "default_types")]
    type_vocab_size: usize,
    #[serde(default)]
    position_embedding_type: Option<String>,
    #[serde(default)]
    model_type: Option<String>,
}

fn default_act() -> String {
    "gelu".to_owned()
}

fn default_eps() -> f32 {
    1e-12
}

fn default_types() -> usize {
    2
}

/// A tensor read from the weights file: its shape and values.
pub(super) struct Weight {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

#[derive(Clone, Copy)]
enum Activation {
    Gelu,
    GeluTanh,
    Relu,
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// `out = x·w + b` with `w` stored transposed (`inputs × outputs`, row-major) for `gemm`.
struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct Layer {
    /// Query, key and value in one product (`hidden × 3·hidden`).
    qkv: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
}

pub(super) struct Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    max_positions: usize,
    type_vocab: usize,
    eps: f32,
    activation: Activation,
}

/// The buffers of a forward pass, kept from one to the next of a batch (fresh pages cost
/// a fault each).
#[derive(Default)]
pub(super) struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    up: Vec<f32>,
    mid: Vec<f32>,
}

/// One text's tokens: ids and segment ids, as the tokenizer gave them.
pub(super) struct Tokens<'a> {
    pub ids: &'a [u32],
    pub types: &'a [u32],
}

/// The tensors of a weights file by name, handed out once each.
struct Tensors {
    by_name: HashMap<String, Weight>,
    /// Where the model's tensors are: "" or a prefix such as "bert." (models saved with a head).
    prefix: String,
}

impl Tensors {
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let weight = self.by_name.remove(&full).ok_or_else(|| format!("the weights have no tensor {full}"))?;
        if weight.shape != shape {
            return Err(format!("tensor {full} has shape {:?}, config.json implies {shape:?}", weight.shape));
        }
        Ok(weight.values)
    }

    /// A layer norm, named `weight`/`bias` or (older checkpoints) `gamma`/`beta`.
    fn norm(&mut self, name: &str, width: usize) -> Result<LayerNorm, String> {
        let modern = format!("{}{name}.weight", self.prefix);
        let (g, b) = if self.by_name.contains_key(&modern) { ("weight", "bias") } else { ("gamma", "beta") };
        Ok(LayerNorm {
            gamma: self.take(&format!("{name}.{g}"), &[width])?,
            beta: self.take(&format!("{name}.{b}"), &[width])?,
        })
    }

    /// PyTorch's `Linear` (`outputs × inputs`), stored transposed.
    fn linear(&mut self, name: &str, inputs: usize, outputs: usize) -> Result<Linear, String> {
        let w = self.take(&format!("{name}.weight"), &[outputs, inputs])?;
        let b = self.take(&format!("{name}.bias"), &[outputs])?;
        Ok(Linear { w: transpose(&w, outputs, inputs), b, inputs, outputs })
    }
}

fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; m.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = m[r * cols + c];
        }
    }
    t
}

/// Query, key and value side by side: one `hidden × 3·hidden` product.
fn fuse(parts: [Linear; 3]) -> Linear {
    let inputs = parts[0].inputs;
    let outputs: usize = parts.iter().map(|p| p.outputs).sum();
    let mut w = Vec::with_capacity(inputs * outputs);
    for row in 0..inputs {
        for p in &parts {
            w.extend_from_slice(&p.w[row * p.outputs..(row + 1) * p.outputs]);
        }
    }
    let b = parts.iter().flat_map(|p| p.b.iter().copied()).collect();
    Linear { w, b, inputs, outputs }
}

impl Bert {
    /// The model described by `config` from its tensors; an error names what does not fit.
    pub fn load(config: &BertConfig, weights: HashMap<String, Weight>) -> Result<Self, String> {
        if let Some(kind) = config.position_embedding_type.as_deref().filter(|k| *k != "absolute") {
            return Err(format!("position_embedding_type \"{kind}\" is not supported (only \"absolute\")"));
        }
        let activation = match config.hidden_act.as_str() {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => return Err(format!("hidden_act \"{other}\" is not supported (gelu, gelu_new or relu)")),
        };
        if let Some(kind) = config.model_type.as_deref().filter(|k| *k != "bert") {
            // RoBERTa-style models name their tensors alike but count positions from 2.
            return Err(format!("model_type \"{kind}\" is not supported (only BERT models)"));
        }
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if hidden == 0 || config.intermediate_size == 0 || config.vocab_size == 0 {
            return Err("hidden_size, intermediate_size and vocab_size must be above 0".to_owned());
        }
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(format!("hidden_size {hidden} is not a multiple of num_attention_heads {heads}"));
        }
        let prefix = ["", "bert.", "model."]
            .into_iter()
            .map(str::to_owned)
            .find(|p| weights.contains_key(&format!("{p}embeddings.word_embeddings.weight")))
            .ok_or("the weights have no embeddings.word_embeddings.weight: not a BERT model")?;
        let mut t = Tensors { by_name: weights, prefix };
        let word = t.take("embeddings.word_embeddings.weight", &[config.vocab_size, hidden])?;
        let position = t.take("embeddings.position_embeddings.weight", &[config.max_position_embeddings, hidden])?;
        let token_type = t.take("embeddings.token_type_embeddings.weight", &[config.type_vocab_size, hidden])?;
        let embed_norm = t.norm("embeddings.LayerNorm", hidden)?;
        let inter = config.intermediate_size;
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = format!("encoder.layer.{i}");
                Ok(Layer {
                    qkv: fuse([
                        t.linear(&format!("{l}.attention.self.query"), hidden, hidden)?,
                        t.linear(&format!("{l}.attention.self.key"), hidden, hidden)?,
                        t.linear(&format!("{l}.attention.self.value"), hidden, hidden)?,
                    ]),
                    attn_out: t.linear(&format!("{l}.attention.output.dense"), hidden, hidden)?,
                    attn_norm: t.norm(&format!("{l}.attention.output.LayerNorm"), hidden)?,
                    up: t.linear(&format!("{l}.intermediate.dense"), hidden, inter)?,
                    down: t.linear(&format!("{l}.output.dense"), inter, hidden)?,
                    out_norm: t.norm(&format!("{l}.output.LayerNorm"), hidden)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self {
            word,
            position,
            token_type,
            embed_norm,
            layers,
            hidden,
            heads,
            max_positions: config.max_position_embeddings,
            type_vocab: config.type_vocab_size,
            eps: config.layer_norm_eps,
            activation,
        })
    }

    /// Texts longer than this are refused by [`Self::forward`]; the tokenizer truncates to it.
    pub fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// The pooled, unit-length vector of each text: the mean of its tokens' last hidden states,
    /// or its first token's with `cls`.
    pub fn embed(&self, texts: &[Tokens<'_>], cls: bool, scratch: &mut Scratch) -> Result<Vec<Vec<f32>>, String> {
        let h = self.hidden;
        let states = self.forward(texts, scratch)?;
        let mut start = 0;
        Ok(texts
            .iter()
            .map(|text| {
                let rows = &states[start * h..(start + text.ids.len()) * h];
                start += text.ids.len();
                if rows.is_empty() {
                    // A tokenizer that adds no [CLS]/[SEP] gives an empty text no tokens.
                    return vec![0.0; h];
                }
                let mut v = if cls {
                    rows[..h].to_vec()
                } else {
                    let mut sum = vec![0.0f32; h];
                    for row in rows.chunks_exact(h) {
                        sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
                    }
                    let n = text.ids.len() as f32;
                    sum.iter_mut().for_each(|s| *s /= n);
                    sum
                };
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect())
    }

    /// The last hidden state of every token of every text, texts one after another (`tokens × hidden`).
    fn forward<'s>(&self, texts: &[Tokens<'_>], scratch: &'s mut Scratch) -> Result<&'s [f32], String> {
        let h = self.hidden;
        let vocab = self.word.len() / h;
        let total: usize = texts.iter().map(|t| t.ids.len()).sum();
        let Scratch { x, qkv, context, up, mid } = scratch;
        let inter = self.layers.first().map_or(0, |l| l.up.outputs);
        for (buffer, width) in [(&mut *x, h), (&mut *qkv, 3 * h), (&mut *context, h), (&mut *up, inter), (&mut *mid, h)]
        {
            buffer.resize(total * width, 0.0);
        }
        let mut row = 0;
        for text in texts {
            if text.ids.len() > self.max_positions {
                return Err(format!("a text of {} tokens (the model takes {})", text.ids.len(), self.max_positions));
            }
            if text.types.len() != text.ids.len() {
                return Err(format!("{} tokens but {} segment ids", text.ids.len(), text.types.len()));
            }
            for (pos, (&id, &ty)) in text.ids.iter().zip(text.types).enumerate() {
                let (id, ty) = (id as usize, ty as usize);
                if id >= vocab || ty >= self.type_vocab {
                    return Err(format!("token id {id} (type {ty}) is outside the model's vocabulary"));
                }
                let out = &mut x[row * h..(row + 1) * h];
                let (w, p, t) =
                    (&self.word[id * h..][..h], &self.position[pos * h..][..h], &self.token_type[ty * h..][..h]);
                for i in 0..h {
                    out[i] = w[i] + p[i] + t[i];
                }
                row += 1;
            }
        }
        layer_norm_rows(x, &self.embed_norm, h, self.eps);

        let spans: Vec<(usize, usize)> = texts
            .iter()
            .scan(0, |start, t| {
                let span = (*start, t.ids.len());
                *start += t.ids.len();
                Some(span)
            })
            .collect();
        for layer in &self.layers {
            layer.qkv.apply(x, total, qkv, None);
            self.attention(qkv, &spans, context);
            layer.attn_out.apply(context, total, mid, Some(x));
            layer_norm_rows(mid, &layer.attn_norm, h, self.eps);
            layer.up.apply(mid, total, up, None);
            activate(up, self.activation);
            layer.down.apply(up, total, x, Some(mid));
            layer_norm_rows(x, &layer.out_norm, h, self.eps);
        }
        Ok(x.as_slice())
    }

    /// Scaled dot-product attention of each text with itself, head by head, into `context`.
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)], context: &mut [f32]) {
        let h = self.hidden;
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let out = SendPtr(context.as_mut_ptr());
        let jobs: Vec<(usize, usize, usize)> = spans
            .iter()
            .filter(|(_, len)| *len > 0)
            .flat_map(|&(start, len)| (0..self.heads).map(move |head| (start, len, head)))
            .collect();
        jobs.into_par_iter().for_each_init(Vec::new, |scores: &mut Vec<f32>, (start, len, head)| {
            scores.clear();
            scores.resize(len * len, 0.0);
            let q = qkv[start * 3 * h + head * d..].as_ptr();
            let k = qkv[start * 3 * h + h + head * d..].as_ptr();
            let v = qkv[start * 3 * h + 2 * h + head * d..].as_ptr();
            let stride = (3 * h) as isize;
            // SAFETY: every pointer stays inside its buffer (rows start..start+len, columns of
            // this head), and no two jobs write the same element of `context`: a job writes only
            // its text's rows and its head's columns.
            unsafe {
                // scores = q·kᵀ · scale
                gemm::gemm(
                    len,
                    len,
                    d,
                    scores.as_mut_ptr(),
                    1,
                    len as isize,
                    false,
                    q,
                    1,
                    stride,
                    k,
                    stride,
                    1,
                    0.0,
                    scale,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
            wide!(softmax_rows(scores, len));
            // SAFETY: as above; `out` is `context`, alive for the whole call.
            unsafe {
                let dst = out.at(start * h + head * d);
                gemm::gemm(
                    len,
                    d,
                    len,
                    dst,
                    1,
                    h as isize,
                    false,
                    scores.as_ptr(),
                    1,
                    len as isize,
                    v,
                    1,
                    stride,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
        });
    }
}

/// A pointer that attention's jobs share; each writes a part of its own.
#[derive(Clone, Copy)]
struct SendPtr(*mut f32);

impl SendPtr {
    /// # Safety
    /// `offset` must lie inside the buffer.
    unsafe fn at(self, offset: usize) -> *mut f32 {
        // SAFETY: as the caller promised.
        unsafe { self.0.add(offset) }
    }
}
// SAFETY: the jobs write disjoint parts of the buffer (see `Bert::attention`).
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

impl Linear {
    /// `out = input·w + b (+ residual)` for `rows` rows, on all cores.
    fn apply(&self, input: &[f32], rows: usize, out: &mut [f32], residual: Option<&[f32]>) {
        let out = &mut out[..rows * self.outputs];
        let input = &input[..rows * self.inputs];
        // The bias (and residual) go in first; the product is added to them.
        out.par_chunks_mut(self.outputs).enumerate().with_min_len(64).for_each(|(r, row)| {
            row.copy_from_slice(&self.b);
            if let Some(res) = residual {
                row.iter_mut().zip(&res[r * self.outputs..(r + 1) * self.outputs]).for_each(|(o, x)| *o += x);
            }
        });
        // SAFETY: the three buffers hold exactly rows×outputs, rows×inputs and inputs×outputs
        // values, row-major, as the strides say.
        unsafe {
            gemm::gemm(
                rows,
                self.outputs,
                self.inputs,
                out.as_mut_ptr(),
                1,
                self.outputs as isize,
                true,
                input.as_ptr(),
                1,
                self.inputs as isize,
                self.w.as_ptr(),
                1,
                self.outputs as isize,
                1.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(0),
            );
        }
    }
}

/// Runs an element-wise kernel (an `#[inline(always)]` function) compiled for AVX-512 or AVX2
/// where the CPU has it: the release build targets any x86-64, whose vectors are 4 floats wide
/// (GELU and softmax took twice as long; docs/BENCHMARKS.md).
macro_rules! wide {
    ($kernel:ident($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
            fn avx512<'a>(f: impl FnOnce() + 'a) {
                f()
            }
            #[target_feature(enable = "avx2,fma")]
            fn avx2<'a>(f: impl FnOnce() + 'a) {
                f()
            }
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
                // SAFETY: the CPU has AVX-512 (F, VL), checked just above; it implies AVX2 and FMA.
                unsafe { avx512(|| $kernel($($arg),*)) }
            } else if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has AVX2 and FMA, checked just above.
                unsafe { avx2(|| $kernel($($arg),*)) }
            } else {
                $kernel($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        $kernel($($arg),*)
    }};
}
use wide;

fn layer_norm_rows(x: &mut [f32], norm: &LayerNorm, width: usize, eps: f32) {
    x.par_chunks_mut(width).with_min_len(64).for_each(|row| wide!(layer_norm(row, norm, eps)));
}

fn activate(x: &mut [f32], activation: Activation) {
    x.par_chunks_mut(4096).for_each(|part| wide!(activate_part(part, activation)));
}

#[inline(always)]
fn layer_norm(row: &mut [f32], norm: &LayerNorm, eps: f32) {
    let n = row.len() as f32;
    let add = |a: f32, b: f32| a + b;
    let mean = lanes(row, 0.0, add, add) / n;
    let var = lanes(row, 0.0, |a, v| a + (v - mean) * (v - mean), add) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
        *v = (*v - mean) * inv * g + b;
    }
}

#[inline(always)]
fn activate_part(part: &mut [f32], activation: Activation) {
    match activation {
        Activation::Gelu => {
            part.iter_mut().for_each(|v| *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2)))
        }
        Activation::GeluTanh => part.iter_mut().for_each(|v| {
            let inner = 0.797_884_6 * (*v + 0.044_715 * *v * *v * *v);
            *v = 0.5 * *v * (1.0 + tanh(inner));
        }),
        Activation::Relu => part.iter_mut().for_each(|v| *v = v.max(0.0)),
    }
}

/// Each row of `scores` (rows of `len`) made a softmax.
#[inline(always)]
fn softmax_rows(scores: &mut [f32], len: usize) {
    for row in scores.chunks_exact_mut(len) {
        let max = lanes(row, f32::NEG_INFINITY, f32::max, f32::max);
        row.iter_mut().for_each(|v| *v = exp(*v - max));
        let inv = 1.0 / lanes(row, 0.0, |a, b| a + b, |a, b| a + b);
        row.iter_mut().for_each(|v| *v *= inv);
    }
}

/// `xs` folded by `step` in 16 lanes, which vectorises (a plain running fold of floats may not
/// be reordered), the lanes then joined by `join`.
#[inline(always)]
fn lanes(xs: &[f32], init: f32, step: impl Fn(f32, f32) -> f32, join: impl Fn(f32, f32) -> f32) -> f32 {
    let mut acc = [init; 16];
    let mut chunks = xs.chunks_exact(16);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = step(*a, v);
        }
    }
    let rest = chunks.remainder().iter().fold(init, |a, &v| step(a, v));
    acc.into_iter().fold(rest, join)
}

/// `e^x`, to about 2e-7 relative, in float and integer arithmetic only (no call, no
/// float-to-int conversion), so that the loops around it vectorise.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5·2²³: adding it leaves no fraction bits
    let x = x.clamp(-87.0, 88.0);
    let t = x * std::f32::consts::LOG2_E;
    let shifted = t + ROUND;
    let n = shifted - ROUND; // t rounded to the nearest integer, in -126..=127
    let g = (t - n) * std::f32::consts::LN_2; // |g| ≤ ln2 / 2
    let p = 1.0 + g * (1.0 + g * (0.5 + g * (1.0 / 6.0 + g * (1.0 / 24.0 + g * (1.0 / 120.0 + g * (1.0 / 720.0))))));
    // 2ⁿ: n sits in the low bits of `shifted`; its exponent field is n + 127.
    let two_n = f32::from_bits(shifted.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(127) << 23);
    p * two_n
}

/// The error function, to about 2e-7 (Abramowitz and Stegun 7.1.26).
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t * (0.254_829_6 + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

#[inline(always)]
fn tanh(x: f32) -> f32 {
    let e = exp(2.0 * x.clamp(-15.0, 15.0));
    (e - 1.0) / (e + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_exp_erf_and_tanh_match_the_standard_library() {
        let mut worst = (0.0f32, 0.0f32, 0.0f32);
        for i in -8000..=8000 {
            let x = i as f32 / 100.0;
            worst.0 = worst.0.max(((exp(x) - x.exp()) / x.exp()).abs());
            let x = i as f32 / 1000.0;
            worst.1 = worst.1.max((erf(x) - libm_erf(x)).abs());
            worst.2 = worst.2.max((tanh(x) - x.tanh()).abs());
        }
        assert!(worst.0 < 1e-5, "exp: relative error {}", worst.0);
        assert!(worst.1 < 1e-6, "erf: error {}", worst.1);
        assert!(worst.2 < 1e-6, "tanh: error {}", worst.2);
    }

    /// erf by its series and continued fraction, in f64: the reference.
    fn libm_erf(x: f32) -> f32 {
        let x = f64::from(x);
        if x.abs() < 4.5 {
            // Maclaurin series: 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1))
            let (mut term, mut sum, mut n) = (x, x, 0.0);
            while term.abs() > 1e-17 {
                n += 1.0;
                term *= -x * x / n;
                sum += term / (2.0 * n + 1.0);
            }
            (sum * 2.0 / std::f64::consts::PI.sqrt()) as f32
        } else {
            x.signum() as f32
        }
    }

    #[test]
    fn a_packed_pass_gives_each_text_what_it_gets_alone() {
        let bert = tiny();
        let a = Tokens { ids: &[1, 5, 7, 2], types: &[0, 0, 0, 0] };
        let b = Tokens { ids: &[1, 3, 2], types: &[0, 1, 1] };
        let both = bert.embed(&[a, b], false, &mut Scratch::default()).unwrap();
        let a = Tokens { ids: &[1, 5, 7, 2], types: &[0, 0, 0, 0] };
        let b = Tokens { ids: &[1, 3, 2], types: &[0, 1, 1] };
        let alone = [
            bert.embed(&[a], false, &mut Scratch::default()).unwrap(),
            bert.embed(&[b], false, &mut Scratch::default()).unwrap(),
        ];
        for (packed, single) in both.iter().zip(alone.iter().map(|v| &v[0])) {
            let diff = packed.iter().zip(single).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
            assert!(diff < 1e-6, "{diff}");
            assert!((packed.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        }
        let err = bert.embed(&[Tokens { ids: &[1, 99], types: &[0, 0] }], false, &mut Scratch::default()).unwrap_err();
        assert!(err.contains("outside the model's vocabulary"), "{err}");
    }

    /// A two-layer model with made-up weights.
    fn tiny() -> Bert {
        let (vocab, hidden, inter, positions) = (10, 8, 16, 6);
        let mut seed = 1u32;
        let mut values = |n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
                })
                .collect()
        };
        let mut w = HashMap::new();
        let mut put = |name: String, shape: Vec<usize>| {
            let values = values(shape.iter().product());
            w.insert(name, Weight { shape, values });
        };
        put("embeddings.word_embeddings.weight".into(), vec![vocab, hidden]);
        put("embeddings.position_embeddings.weight".into(), vec![positions, hidden]);
        put("embeddings.token_type_embeddings.weight".into(), vec![2, hidden]);
        for norm in ["embeddings.LayerNorm".to_owned()].into_iter().chain((0..2).flat_map(|i| {
            [format!("encoder.layer.{i}.attention.output.LayerNorm"), format!("encoder.layer.{i}.output.LayerNorm")]
        })) {
            put(format!("{norm}.weight"), vec![hidden]);
            put(format!("{norm}.bias"), vec![hidden]);
        }
        for i in 0..2 {
            let l = format!("encoder.layer.{i}");
            for (name, out, inp) in [
                ("attention.self.query", hidden, hidden),
                ("attention.self.key", hidden, hidden),
                ("attention.self.value", hidden, hidden),
                ("attention.output.dense", hidden, hidden),
                ("intermediate.dense", inter, hidden),
                ("output.dense", hidden, inter),
            ] {
                put(format!("{l}.{name}.weight"), vec![out, inp]);
                put(format!("{l}.{name}.bias"), vec![out]);
            }
        }
        let config: BertConfig = serde_json::from_value(serde_json::json!({
            "vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": inter, "max_position_embeddings": positions,
        }))
        .unwrap();
        Bert::load(&config, w).unwrap()
    }
}
