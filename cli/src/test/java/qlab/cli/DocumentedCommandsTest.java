package qlab.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import qlab.pipeline.matrix.MatrixExpansion;
import qlab.pipeline.matrix.SweepFileParser;
import qlab.pipeline.matrix.SweepMatrix;

/**
 * Every {@code ./qlab ...} line in a fenced code block of README.md and docs/*.md goes through the
 * command-line parser (not the work), so a renamed or removed option breaks the build instead of the
 * documentation. {@code ./qlab test}, {@code ./qlab run-bench} and {@code ./qlab fuzz} belong to the launcher script.
 * The sweep-file example of docs/sweep.md goes through the sweep-file parser likewise.
 */
class DocumentedCommandsTest {

    private static final List<String> LAUNCHER_COMMANDS = List.of("test", "run-bench", "fuzz");

    @Test
    void everyDocumentedCommandLineParses() throws IOException {
        Path root = repositoryRoot();
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        Path docs = root.resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> s = Files.list(docs)) {
                s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
            }
        }
        List<String> failures = new ArrayList<>();
        int parsed = 0;
        for (Path page : pages) {
            for (DocumentedCommand c : commands(page)) {
                if (LAUNCHER_COMMANDS.contains(c.args().getFirst())) {
                    continue;
                }
                try {
                    Main.commandLine().parseArgs(c.args().toArray(String[]::new));
                    parsed++;
                } catch (CommandLine.ParameterException e) {
                    failures.add(root.relativize(page) + ":" + c.line() + ": " + String.join(" ", c.args()) + "\n    " + e.getMessage());
                }
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " documented command line(s) do not parse:\n" + String.join("\n", failures));
        }
        assertTrue(parsed >= 10, "only " + parsed + " ./qlab lines found in " + pages + ": is the extraction broken?");
    }

    @Test
    void everyCommandsHelpHasOneLineOfPurposeAndAnExampleThatParses() {
        List<String> failures = new ArrayList<>();
        Main.commandLine().getSubcommands().forEach((name, sub) -> {
            if (name.equals("help")) {
                return;
            }
            CommandLine.Model.UsageMessageSpec usage = sub.getCommandSpec().usageMessage();
            if (usage.description().length != 1) {
                failures.add(name + ": " + usage.description().length + " description lines, not one");
            }
            // An example longer than the 80-column help continues on the next lines with a backslash.
            List<String> examples = new ArrayList<>();
            String[] footer = usage.footer();
            for (int i = 0; i < footer.length; i++) {
                if (footer[i].strip().startsWith("./qlab ")) {
                    StringBuilder line = new StringBuilder(footer[i].strip());
                    while (line.toString().endsWith("\\") && i + 1 < footer.length) {
                        line.setLength(line.length() - 1);
                        line.append(' ').append(footer[++i].strip());
                    }
                    examples.add(line.toString());
                }
            }
            if (examples.size() != 1 || !examples.getFirst().startsWith("./qlab " + name + " ")) {
                failures.add(name + ": footer examples " + examples);
                return;
            }
            try {
                Main.commandLine().parseArgs(shellWords(examples.getFirst()).stream().skip(1).toArray(String[]::new));
            } catch (CommandLine.ParameterException e) {
                failures.add(name + ": " + examples.getFirst() + "\n    " + e.getMessage());
            }
        });
        if (!failures.isEmpty()) {
            fail(String.join("\n", failures));
        }
    }

    /** The sweep-file example of docs/sweep.md, with the paths it names, is a valid sweep file. */
    @Test
    void documentedSweepFileParses(@TempDir Path tmp) throws IOException {
        Path root = repositoryRoot();
        List<String> lines = Files.readAllLines(root.resolve("docs/sweep.md"));
        int start = lines.indexOf("```yaml");
        assertTrue(start >= 0, "docs/sweep.md has no yaml block");
        int end = lines.subList(start + 1, lines.size()).indexOf("```") + start + 1;
        Path file = tmp.resolve("configs/example.yaml");
        Files.createDirectories(file.getParent());
        Files.write(file, lines.subList(start + 1, end));
        // Its relative paths point from configs/ to datasets/, as the files in configs/ do.
        for (String text : List.of("calib/en-prose.txt", "calib/code.txt", "eval/en-prose.txt")) {
            Path target = tmp.resolve("datasets").resolve(text);
            Files.createDirectories(target.getParent());
            Files.copy(root.resolve("datasets").resolve(text), target);
        }
        SweepMatrix m = SweepFileParser.parse(file);
        assertTrue(MatrixExpansion.expand(m).runnable() > 0, "the example expands to runnable configs");
    }

    @Test
    void extractionJoinsContinuationsAndDropsCommentsAndRedirections() throws IOException {
        Path page = Files.createTempFile("doc", ".md");
        try {
            Files.writeString(page, """
                    ./qlab ppl --model outside/a/block   (not in a code block)
                    ```
                    ./qlab quantize --model m --format q4_0 \\
                        --out "a b.safetensors"   # a comment
                    QLAB_JAVA_OPTS=-Dx=1 ./qlab pareto results/quick --json > out.json
                    ./qlab bench --model m 2>&1 | tail -3
                    echo not qlab
                    ```
                    """);
            List<DocumentedCommand> c = commands(page);
            assertTrue(c.equals(List.of(
                    new DocumentedCommand(3, List.of("quantize", "--model", "m", "--format", "q4_0", "--out", "a b.safetensors")),
                    new DocumentedCommand(5, List.of("pareto", "results/quick", "--json")),
                    new DocumentedCommand(6, List.of("bench", "--model", "m")))), c.toString());
        } finally {
            Files.delete(page);
        }
    }

    record DocumentedCommand(int line, List<String> args) {}

    /** The {@code ./qlab} command lines of the fenced code blocks of a Markdown page, as argument lists. */
    static List<DocumentedCommand> commands(Path page) throws IOException {
        List<String> lines = Files.readAllLines(page);
        List<DocumentedCommand> out = new ArrayList<>();
        boolean fenced = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (!fenced) {
                continue;
            }
            int start = i;
            StringBuilder text = new StringBuilder(line);
            while (text.toString().endsWith("\\") && i + 1 < lines.size()) {
                text.setLength(text.length() - 1);
                text.append(' ').append(lines.get(++i).strip());
            }
            List<String> words = shellWords(text.toString());
            // Leading VAR=value assignments, as in QLAB_JAVA_OPTS=... ./qlab sweep ...
            while (!words.isEmpty() && words.getFirst().matches("[A-Za-z_][A-Za-z0-9_]*=.*")) {
                words.removeFirst();
            }
            if (words.size() > 1 && words.getFirst().equals("./qlab")) {
                out.add(new DocumentedCommand(start + 1, words.subList(1, words.size())));
            }
        }
        return out;
    }

    /** Words as a POSIX shell splits them, up to a comment, a pipe or a redirection. */
    private static List<String> shellWords(String s) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (quote != 0) {
                if (ch == quote) {
                    quote = 0;
                } else {
                    w.append(ch);
                }
            } else if (ch == '\'' || ch == '"') {
                quote = ch;
                inWord = true;
            } else if (Character.isWhitespace(ch)) {
                if (inWord) {
                    words.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
            } else if (!inWord && (ch == '#' || ch == '|' || ch == '>' || ch == '<' || ch == ';' || ch == '&')
                    || inWord && (ch == '|' || ch == ';') || !inWord && Character.isDigit(ch) && i + 1 < s.length() && s.charAt(i + 1) == '>') {
                break;
            } else {
                w.append(ch);
                inWord = true;
            }
        }
        if (inWord) {
            words.add(w.toString());
        }
        return words;
    }

    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("README.md")) && Files.isRegularFile(dir.resolve("qlab")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no README.md with a qlab launcher above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }
}
