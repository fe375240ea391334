package qlab.engine.tokenizer.train;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Deterministic multilingual text for tests: English-like prose, Java/Python-like code and
 * Chinese-like sentences drawn from small hand-written word lists with a seeded {@link Random}
 * (whose algorithm the JDK specifies, so the text is the same on every JVM).
 */
final class TestCorpus {

    private static final String[] ENGLISH = ("the of and to in is that it for was on are as with his they at be this "
            + "from have or by one had not but what all were when we there can an your which their said if do will "
            + "each about how up out them then she many some so these would other into has more her two like him see "
            + "time could no make than first been its who now people my made over did down only way find use may water "
            + "long little very after words called just where most know get through back much before go good new write "
            + "our used me man too any day same right look think also around another came come work three word must "
            + "because does part even place well such here take why things help put years different away again off "
            + "went old number great tell men say small every found still between name should home big give air line "
            + "set own under read last never us left end along while might next sound below saw something thought both "
            + "few those always looked show large often together asked house don't world going want school important "
            + "until form food keep children feet land side without boy once animals life enough took sometimes four "
            + "head above kind began almost live page got earth need far hand high year mother light parts country "
            + "father let night following picture being study second eyes soon times story boys since white days ever "
            + "paper hard near sentence better best across during today others however sure means knew it's try told "
            + "young miles sun ways thing whole hear example heard several change answer room sea against top turned "
            + "learn point city play toward five using himself usually quantization matrix tensor weights model layer")
            .split(" ");

    private static final String[] CODE_WORDS = ("int float double return if else for while new final static public "
            + "private void class import value index count size length result buffer matrix weights scale block row "
            + "col offset input output hidden state cache token tokens logits embed norm layer config path file name "
            + "list map key entry item data bytes sum max min mean error limit def self None True False print range "
            + "len append dict str").split(" ");

    private static final String CHINESE_CHARS = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着"
            + "去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三"
            + "已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很"
            + "业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体"
            + "别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王"
            + "果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社"
            + "术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区"
            + "即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站"
            + "广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴奇";

    private static final String[] SYLLABLES = ("ka to ri mi sa ne lo vu pe ra in on an el ar or ul is et ba de fi go "
            + "hu ja ke li mo nu pi qu se ti vo wa xe yo ze str thr pl gr tr br cl sh ch ph").split(" ");

    private static final String[] PUNCTUATION = {".", ".", ".", ",", ",", ";", "?", "!", ":"};

    private TestCorpus() {}

    /** Documents of about {@code targetBytes} UTF-8 bytes in total, mixing the three kinds. */
    static List<String> documents(long seed, int targetBytes) {
        Random r = new Random(seed);
        List<String> docs = new ArrayList<>();
        int bytes = 0;
        while (bytes < targetBytes) {
            String doc = switch (docs.size() % 3) {
                case 0 -> prose(r, 6 + r.nextInt(10));
                case 1 -> code(r, 5 + r.nextInt(15));
                default -> chinese(r, 3 + r.nextInt(8));
            };
            docs.add(doc);
            bytes += doc.getBytes(StandardCharsets.UTF_8).length;
        }
        return docs;
    }

    static String prose(Random r, int sentences) {
        StringBuilder sb = new StringBuilder();
        for (int s = 0; s < sentences; s++) {
            if (s > 0) {
                sb.append(r.nextInt(5) == 0 ? "\n\n" : " ");
            }
            int words = 4 + r.nextInt(14);
            for (int w = 0; w < words; w++) {
                String word = r.nextInt(4) == 0 ? inventedWord(r) : ENGLISH[skewed(r, ENGLISH.length)];
                if (w == 0) {
                    word = Character.toUpperCase(word.charAt(0)) + word.substring(1);
                } else {
                    sb.append(' ');
                }
                sb.append(word);
                if (w + 1 < words && r.nextInt(12) == 0) {
                    sb.append(',');
                }
                if (r.nextInt(40) == 0) {
                    sb.append(' ').append(1 + r.nextInt(2030));
                }
            }
            sb.append(PUNCTUATION[r.nextInt(PUNCTUATION.length)]);
        }
        return sb.toString();
    }

    static String code(Random r, int lines) {
        StringBuilder sb = new StringBuilder();
        int depth = 0;
        for (int l = 0; l < lines; l++) {
            sb.append("    ".repeat(depth));
            String a = r.nextInt(3) == 0 ? identifier(r) : CODE_WORDS[r.nextInt(CODE_WORDS.length)];
            String b = CODE_WORDS[r.nextInt(CODE_WORDS.length)];
            String c = CODE_WORDS[r.nextInt(CODE_WORDS.length)];
            switch (r.nextInt(6)) {
                case 0 -> sb.append("for (int i = 0; i < ").append(a).append(".length; i++) {");
                case 1 -> sb.append(a).append('[').append(b).append("] += ").append(c).append(" * ")
                        .append(r.nextInt(100)).append(';');
                case 2 -> sb.append("if ").append(a).append(" == ").append(b).append(":");
                case 3 -> sb.append("return ").append(a).append('.').append(b).append('(').append(c).append(");");
                case 4 -> sb.append("// ").append(a).append(' ').append(b).append(' ').append(c);
                default -> sb.append(a).append(' ').append(b).append(" = ").append(c).append("(0x")
                        .append(Integer.toHexString(r.nextInt(65536))).append(");");
            }
            sb.append('\n');
            depth = Math.max(0, Math.min(3, depth + r.nextInt(3) - 1));
        }
        return sb.toString();
    }

    static String chinese(Random r, int sentences) {
        StringBuilder sb = new StringBuilder();
        for (int s = 0; s < sentences; s++) {
            int clauses = 1 + r.nextInt(3);
            for (int c = 0; c < clauses; c++) {
                int chars = 3 + r.nextInt(10);
                for (int i = 0; i < chars; i++) {
                    sb.append(CHINESE_CHARS.charAt(skewed(r, CHINESE_CHARS.length())));
                }
                sb.append(c + 1 < clauses ? "，" : "。");
            }
        }
        return sb.toString();
    }

    /** A made-up word from a skewed choice of syllables, so the vocabulary keeps growing like real text. */
    static String inventedWord(Random r) {
        StringBuilder sb = new StringBuilder();
        int n = 1 + r.nextInt(5);
        for (int i = 0; i < n; i++) {
            sb.append(SYLLABLES[r.nextInt(SYLLABLES.length)]);
        }
        return sb.toString();
    }

    /** A camelCase identifier of two or three parts. */
    static String identifier(Random r) {
        StringBuilder sb = new StringBuilder(CODE_WORDS[r.nextInt(CODE_WORDS.length)]);
        int n = 1 + r.nextInt(2);
        for (int i = 0; i < n; i++) {
            String part = r.nextBoolean() ? CODE_WORDS[r.nextInt(CODE_WORDS.length)] : inventedWord(r);
            sb.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
        }
        return sb.toString();
    }

    /** An index in [0, n) with small ones much more likely, roughly like word frequencies. */
    private static int skewed(Random r, int n) {
        double u = r.nextDouble();
        return (int) (n * u * u * u);
    }
}
