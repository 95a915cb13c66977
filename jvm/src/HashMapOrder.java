import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * The order {@code java.util.HashMap} and {@code HashSet} iterate, on this JVM, for the tests of
 * our models of them (assignor/java_hash.py, assignor/ordering.py): Integer
 * keys (partitions) and Kafka's {@link Uuid} (topic ids), as the broker's assignors hold them,
 * Strings (member ids, topic names), as the client's do, and {@link TopicPartition}s
 * ({@code TOPIC-PARTITION}), as the client's sticky assignor moves them. Reads lines:
 * {@code map int|uuid|str|tp [CAPACITY]} (a new {@code HashMap}, of that initial capacity if given),
 * {@code copy int|uuid|str|tp KEY...} (a new {@code HashSet} of the keys' list), {@code put KEY},
 * {@code cia KEY} ({@code computeIfAbsent}, maps only), {@code remove KEY} and {@code list},
 * answered with the keys in iteration order, tab-separated, on one line.
 */
public final class HashMapOrder {
    private HashMapOrder() { }

    public static void main(String[] args) throws Exception {
        Map<Object, Boolean> map = new HashMap<>();
        Set<Object> set = null;
        String kind = "int";
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] words = line.split(" ");
            switch (words[0]) {
                case "map":
                    kind = words[1];
                    map = words.length > 2 ? new HashMap<>(Integer.parseInt(words[2])) : new HashMap<>();
                    set = null;
                    break;
                case "copy":
                    kind = words[1];
                    List<Object> keys = new ArrayList<>();
                    for (int i = 2; i < words.length; i++) {
                        keys.add(key(words[i], kind));
                    }
                    set = new HashSet<>(keys);
                    break;
                case "put":
                    if (set != null) {
                        set.add(key(words[1], kind));
                    } else {
                        map.put(key(words[1], kind), Boolean.TRUE);
                    }
                    break;
                case "cia":
                    map.computeIfAbsent(key(words[1], kind), k -> Boolean.TRUE);
                    break;
                case "remove":
                    if (set != null) {
                        set.remove(key(words[1], kind));
                    } else {
                        map.remove(key(words[1], kind));
                    }
                    break;
                case "list":
                    List<String> found = new ArrayList<>();
                    for (Object k : set != null ? set : map.keySet()) {
                        found.add(k.toString());
                    }
                    out.append(String.join("\t", found)).append('\n');
                    break;
                default:
                    throw new IllegalArgumentException("not a command: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    private static Object key(String text, String kind) {
        switch (kind) {
            case "uuid":
                return Uuid.fromString(text);
            case "str":
                return text;
            case "tp":
                int dash = text.lastIndexOf('-');
                return new TopicPartition(text.substring(0, dash), Integer.parseInt(text.substring(dash + 1)));
            default:
                return Integer.valueOf(text);
        }
    }
}
