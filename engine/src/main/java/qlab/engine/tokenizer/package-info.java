/**
 * Byte-level BPE tokenization from Hugging Face {@code tokenizer.json} files, exact to the reference
 * library: {@link qlab.engine.tokenizer.Tokenizer} (load, encode, decode, vocabulary queries) and
 * {@link qlab.engine.tokenizer.StreamingDecoder} (incremental decode while generating).
 *
 * <p>Pipeline: added tokens are cut out of the raw text first; the rest is normalized
 * ({@link qlab.engine.tokenizer.UnicodeNormalization}), split into pre-tokens
 * ({@link qlab.engine.tokenizer.Qwen2PatternScanner} for the Qwen2/Llama 3 patterns,
 * {@link qlab.engine.tokenizer.TranslatedRegexSplitter} for any other pattern, each the other's
 * check), spelled as bytes and merged ({@link qlab.engine.tokenizer.BpeModel},
 * {@link qlab.engine.tokenizer.BpeMerger}, {@link qlab.engine.tokenizer.MergeTable}), with a bounded
 * per-pre-token cache ({@link qlab.engine.tokenizer.PieceCache}).
 */
package qlab.engine.tokenizer;
