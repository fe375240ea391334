/**
 * BPE tokenization from Hugging Face {@code tokenizer.json} files, exact to the reference library:
 * {@link qlab.engine.tokenizer.Tokenizer} (load, encode, decode, vocabulary queries) and
 * {@link qlab.engine.tokenizer.StreamingDecoder} (incremental decode while generating). Byte-level
 * vocabularies (Qwen, Llama 3, GPT-2 style) and SentencePiece-style ones (Llama 2, Mistral, Gemma:
 * {@code ▁} for spaces, {@code <0xNN>} byte fallback) are both supported.
 *
 * <p>Pipeline: added tokens are cut out of the raw text first; the rest is normalized
 * ({@link qlab.engine.tokenizer.TextNormalizer}: Unicode forms, Prepend, Replace), split into pre-tokens
 * ({@link qlab.engine.tokenizer.Qwen2PatternScanner} for the Qwen2/Llama 3 patterns,
 * {@link qlab.engine.tokenizer.TranslatedRegexSplitter} for any other pattern, each the other's
 * check; {@link qlab.engine.tokenizer.MetaspaceSplitter}, {@link qlab.engine.tokenizer.DigitsSplitter}),
 * spelled as symbols (bytes in the byte-level alphabet, or characters with byte fallback:
 * {@link qlab.engine.tokenizer.CharSymbols}) and merged ({@link qlab.engine.tokenizer.BpeModel},
 * {@link qlab.engine.tokenizer.BpeMerger}, {@link qlab.engine.tokenizer.MergeTable}), with a bounded
 * per-pre-token cache ({@link qlab.engine.tokenizer.PieceCache}). Decoding is byte-level UTF-8, or the
 * file's decoder chain ({@link qlab.engine.tokenizer.DecoderChain}).
 */
package qlab.engine.tokenizer;
