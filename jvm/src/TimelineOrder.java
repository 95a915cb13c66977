import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * The order Kafka's {@link TimelineHashMap} iterates, for the tests of our model of it
 * (assignor/strategies/kip848/member_map.py): a consumer group's member map, created empty as
 * {@code ModernGroup} creates it. Reads lines {@code put KEY}, {@code remove KEY}, {@code list}
 * and {@code reset} (a new empty map), and answers each {@code list} with the keys in iteration
 * order, tab-separated, on one line. A snapshot is taken before each change, as the coordinator takes one per offset
 * (they keep history; the current view is what the assignors read).
 */
public final class TimelineOrder {
    private TimelineOrder() { }

    public static void main(String[] args) throws Exception {
        SnapshotRegistry registry = new SnapshotRegistry(new LogContext());
        TimelineHashMap<String, Integer> members = new TimelineHashMap<>(registry, 0);
        long epoch = 0;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.equals("reset")) {
                registry = new SnapshotRegistry(new LogContext());
                members = new TimelineHashMap<>(registry, 0);
                epoch = 0;
                continue;
            }
            if (line.equals("list")) {
                List<String> keys = new ArrayList<>(members.keySet());
                out.append(String.join("\t", keys)).append('\n');
                continue;
            }
            registry.idempotentCreateSnapshot(epoch++);
            String key = line.substring(line.indexOf(' ') + 1);
            if (line.startsWith("put ")) {
                members.put(key, 0);
            } else if (line.startsWith("remove ")) {
                members.remove(key);
            } else {
                throw new IllegalArgumentException("not a command: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }
}
