package qlab.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import qlab.engine.QlabException;
import qlab.engine.util.OutputPaths;
import qlab.engine.tokenizer.Tokenizer;
import qlab.engine.util.JsonErrors;
import qlab.quant.checkpoint.GgufCheckpoint;

/** Tokenizes a JSON-lines file: each {"text": ...} line becomes {"text": ..., "ids": [...]}. */
@Command(name = "tokenize", mixinStandardHelpOptions = true,
        description = "Encode the \"text\" of every line of a JSON-lines file with a model's tokenizer.",
        footer = {"", "Example:", "  ./qlab tokenize --model models/small --jsonl in.jsonl --out out.jsonl"})
public final class TokenizeCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "DIR",
            description = "Model directory (or any directory holding tokenizer.json), or the tokenizer.json file.")
    Path model;

    @Option(names = "--jsonl", required = true, paramLabel = "IN", description = "Input: one JSON object with \"text\" per line.")
    Path input;

    @Option(names = "--out", required = true, paramLabel = "OUT", description = "Output JSON-lines file (written whole or not at all).")
    Path output;

    @Override
    public Integer call() throws IOException {
        Tokenizer tokenizer = GgufCheckpoint.isGguf(model) ? TextTokens.require(model) : Tokenizer.load(model);
        if (!Files.isRegularFile(input)) {
            throw new QlabException(input + ": input file not found");
        }
        ObjectMapper json = new ObjectMapper();
        OutputPaths.prepareFile(output);
        Path absoluteOut = output.toAbsolutePath();
        Path tmp = absoluteOut.resolveSibling(absoluteOut.getFileName() + ".part");
        long lines = 0;
        try (BufferedReader in = Files.newBufferedReader(input, StandardCharsets.UTF_8);
             BufferedWriter out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            String line;
            long lineNumber = 0;
            while ((line = in.readLine()) != null) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                String text = textOf(json, line, lineNumber);
                ObjectNode record = json.createObjectNode();
                record.put("text", text);
                ArrayNode ids = record.putArray("ids");
                for (int id : tokenizer.encode(text)) {
                    ids.add(id);
                }
                out.write(json.writeValueAsString(record));
                out.write('\n');
                lines++;
            }
        } catch (QlabException | IOException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.move(tmp, absoluteOut, StandardCopyOption.REPLACE_EXISTING);
        System.err.println("qlab tokenize: " + lines + " lines -> " + output);
        return 0;
    }

    private String textOf(ObjectMapper json, String line, long lineNumber) {
        JsonNode node;
        try {
            node = json.readTree(line);
        } catch (JsonProcessingException e) {
            throw new QlabException(input + ": line " + lineNumber + ": invalid JSON: " + JsonErrors.why(e));
        }
        JsonNode text = node == null || !node.isObject() ? null : node.get("text");
        if (text == null) {
            throw new QlabException(input + ": line " + lineNumber + ": field \"text\" is missing");
        }
        if (!text.isTextual()) {
            throw new QlabException(input + ": line " + lineNumber + ": field \"text\" must be a string, is " + text);
        }
        return text.asText();
    }
}
