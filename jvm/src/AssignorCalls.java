import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The Java client's own assignors, called as a group's leader calls them
 * ({@code assign(Cluster, GroupSubscription)}, the subscriptions in a {@code HashMap} by member id
 * as {@code ConsumerCoordinator.onLeaderElected} builds it), for the tests that hold ours to them
 * (tests/integration/test_java_assignors.py). A fresh assignor per call: a leader that has not
 * assigned before. Reads lines:
 * <ul>
 * <li>{@code topic NAME COUNT} or {@code topic NAME RACKS/RACKS/...} (one entry per partition: its
 * replicas' racks, comma-separated, {@code -} for a replica without a rack);</li>
 * <li>{@code member ID RACK|- GENERATION TOPIC,... OWNED|- USERDATA|- [INSTANCE]} (owned partitions as
 * {@code TOPIC:PARTITION,...}, sent in the subscription's owned partitions and generation, as a
 * consumer of protocol version 3 sends them; user data in hex, as an eager sticky member sends its
 * previous assignment; a static member's instance id last);</li>
 * <li>{@code assign sticky|cooperative-sticky|range|roundrobin}: answered with one line, each member's
 * {@code ID=TOPIC:PARTITION,...} in the assignment's order, tab-separated, by member id; the topics
 * and members are then forgotten; {@code !} and the exception's class where the assignor threw.</li>
 * <li>{@code time sticky|... RUNS LIMIT_MS}: the benchmark's peer figure (bench/java_client.py):
 * one call to warm up, then RUNS calls, each a fresh assignor on the same topics and members,
 * answered with one line: each timed call's milliseconds, comma-separated, {@code ;} and the
 * least and most partitions a member got ({@code MIN-MAX}); {@code timeout} as soon as one call
 * takes longer than LIMIT_MS (the JVM then exits).</li>
 * </ul>
 */
public final class AssignorCalls {
    private AssignorCalls() { }

    public static void main(String[] args) throws Exception {
        Map<String, String[]> topics = new LinkedHashMap<>();
        Map<String, Subscription> members = new HashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] words = line.split(" ");
            switch (words[0]) {
                case "topic":
                    topics.put(words[1], words[2].matches("[0-9]+")
                        ? new String[Integer.parseInt(words[2])] : words[2].split("/", -1));
                    break;
                case "member":
                    Optional<String> rack = words[2].equals("-") ? Optional.empty() : Optional.of(words[2]);
                    List<TopicPartition> owned = new ArrayList<>();
                    if (!words[5].equals("-")) {
                        for (String tp : words[5].split(",")) {
                            int colon = tp.lastIndexOf(':');
                            owned.add(new TopicPartition(tp.substring(0, colon), Integer.parseInt(tp.substring(colon + 1))));
                        }
                    }
                    ByteBuffer userData = words[6].equals("-") ? null : ByteBuffer.wrap(hex(words[6]));
                    Subscription subscription = new Subscription(Arrays.asList(words[4].split(",")), userData, owned,
                        Integer.parseInt(words[3]), rack);
                    if (words.length > 7) {
                        subscription.setGroupInstanceId(Optional.of(words[7]));
                    }
                    members.put(words[1], subscription);
                    break;
                case "time":
                    out.append(timed(words[1], Integer.parseInt(words[2]), Long.parseLong(words[3]), topics, members))
                        .append('\n');
                    topics = new LinkedHashMap<>();
                    members = new HashMap<>();
                    break;
                case "assign":
                    try {
                        out.append(assigned(assignor(words[1]), topics, members)).append('\n');
                    } catch (RuntimeException e) {
                        out.append('!').append(e.getClass().getSimpleName()).append('\n');
                    }
                    topics = new LinkedHashMap<>();
                    members = new HashMap<>();
                    break;
                default:
                    throw new IllegalArgumentException("not a command: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    private static String timed(String name, int runs, long limitMs, Map<String, String[]> topics,
                                Map<String, Subscription> members) throws Exception {
        Cluster cluster = cluster(topics);
        GroupSubscription subscription = new GroupSubscription(members);
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r);
            thread.setDaemon(true);
            return thread;
        });
        List<String> millis = new ArrayList<>();
        GroupAssignment last = null;
        for (int run = 0; run <= runs; run++) {
            long start = System.nanoTime();
            Future<GroupAssignment> call = executor.submit(() -> assignor(name).assign(cluster, subscription));
            try {
                last = call.get(limitMs, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                System.out.print("timeout\n");
                System.out.flush();
                System.exit(0);
            }
            if (run > 0) {
                millis.add(Double.toString((System.nanoTime() - start) / 1e6));
            }
        }
        executor.shutdown();
        int least = Integer.MAX_VALUE;
        int most = 0;
        for (ConsumerPartitionAssignor.Assignment member : last.groupAssignment().values()) {
            least = Math.min(least, member.partitions().size());
            most = Math.max(most, member.partitions().size());
        }
        return String.join(",", millis) + ";" + least + "-" + most;
    }

    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            case "range":
                return new RangeAssignor();
            case "roundrobin":
                return new RoundRobinAssignor();
            default:
                throw new IllegalArgumentException("no such assignor: " + name);
        }
    }

    private static String assigned(ConsumerPartitionAssignor assignor, Map<String, String[]> topics,
                                   Map<String, Subscription> members) {
        GroupAssignment assignment = assignor.assign(cluster(topics), new GroupSubscription(members));
        List<String> found = new ArrayList<>();
        for (Map.Entry<String, ConsumerPartitionAssignor.Assignment> member
                 : new TreeMap<>(assignment.groupAssignment()).entrySet()) {
            List<String> tps = new ArrayList<>();
            for (TopicPartition tp : member.getValue().partitions()) {
                tps.add(tp.topic() + ":" + tp.partition());
            }
            found.add(member.getKey() + "=" + String.join(",", tps));
        }
        return String.join("\t", found);
    }

    private static Cluster cluster(Map<String, String[]> topics) {
        Map<String, Node> nodes = new HashMap<>();
        List<PartitionInfo> partitions = new ArrayList<>();
        for (Map.Entry<String, String[]> topic : topics.entrySet()) {
            String[] racks = topic.getValue();
            for (int p = 0; p < racks.length; p++) {
                List<Node> replicas = new ArrayList<>();
                for (String replica : racks[p] == null ? new String[] {"-"} : racks[p].split(",")) {
                    replicas.add(nodes.computeIfAbsent(replica, r -> new Node(nodes.size(), "h", 9092,
                        r.equals("-") ? null : r)));
                }
                Node[] array = replicas.toArray(new Node[0]);
                partitions.add(new PartitionInfo(topic.getKey(), p, array[0], array, array));
            }
        }
        return new Cluster("c", nodes.values(), partitions, Collections.emptySet(), Collections.emptySet());
    }

    private static byte[] hex(String text) {
        byte[] bytes = new byte[text.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }
}
