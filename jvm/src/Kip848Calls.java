import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.coordinator.group.modern.TopicIds;

/**
 * The broker's KIP-848 assignors (kafka-group-coordinator 4.3.1's {@code UniformAssignor} and
 * {@code RangeAssignor}) called as {@code TargetAssignmentBuilder.build} calls them, for the tests
 * that hold ours to them (tests/integration/test_kip848_assignors.py): the member specs in a
 * {@code HashMap} filled in the member map's order, each member's current target rebuilt from its
 * record ({@code Assignment.fromRecord}), its subscribed topics resolved by {@code TopicIds}, the
 * subscription type as the group computes it. Reads lines:
 * <ul>
 * <li>{@code topic NAME ID COUNT};</li>
 * <li>{@code member ID INSTANCE|- RACK|- TOPIC,... TARGET|-} (its subscription, iterated in this
 * order; its current target as its record lists it: {@code TOPICID:P+P+...}, comma-separated);</li>
 * <li>{@code assign uniform|range}: answered with one line, each member's new target as the
 * coordinator would write its record ({@code ID=TOPICID:P+P,...}), tab-separated, members in the
 * specs' order; then everything is forgotten. {@code !} and the class of an exception instead.</li>
 * </ul>
 */
public final class Kip848Calls {
    private Kip848Calls() { }

    private record Topic(String name, Uuid id, int partitions) { }

    public static void main(String[] args) throws Exception {
        Map<String, Topic> topics = new LinkedHashMap<>();
        List<String[]> members = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] words = line.split(" ");
            switch (words[0]) {
                case "topic":
                    topics.put(words[1], new Topic(words[1], Uuid.fromString(words[2]), Integer.parseInt(words[3])));
                    break;
                case "member":
                    members.add(words);
                    break;
                case "assign":
                    try {
                        out.append(assigned(words[1], topics, members)).append('\n');
                    } catch (RuntimeException e) {
                        out.append('!').append(e.getClass().getSimpleName()).append('\n');
                    }
                    topics = new LinkedHashMap<>();
                    members = new ArrayList<>();
                    break;
                default:
                    throw new IllegalArgumentException("not a command: " + line);
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    private static String assigned(String name, Map<String, Topic> topics, List<String[]> members) {
        ConsumerGroupPartitionAssignor assignor = name.equals("range") ? new RangeAssignor() : new UniformAssignor();
        CoordinatorMetadataImage image = image(topics);
        TopicIds.TopicResolver resolver = new TopicIds.CachedTopicResolver(image);
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Set<Set<String>> subscriptions = new java.util.HashSet<>();
        for (String[] words : members) {
            Set<String> subscribed = new LinkedHashSet<>(List.of(words[4].split(",")));
            subscriptions.add(subscribed);
            List<ConsumerGroupTargetAssignmentMemberValue.TopicPartition> record = new ArrayList<>();
            if (!words[5].equals("-")) {
                for (String entry : words[5].split(",")) {
                    Uuid id = Uuid.fromString(entry.substring(0, entry.indexOf(':')));
                    List<Integer> partitions = new ArrayList<>();
                    for (String p : entry.substring(entry.indexOf(':') + 1).split("\\+")) {
                        partitions.add(Integer.parseInt(p));
                        inverted.computeIfAbsent(id, k -> new HashMap<>()).put(Integer.parseInt(p), words[1]);
                    }
                    record.add(new ConsumerGroupTargetAssignmentMemberValue.TopicPartition()
                        .setTopicId(id).setPartitions(partitions));
                }
            }
            Assignment target = Assignment.fromRecord(new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(record));
            specs.put(words[1], new MemberSubscriptionAndAssignmentImpl(
                words[3].equals("-") ? Optional.empty() : Optional.of(words[3]),
                words[2].equals("-") ? Optional.empty() : Optional.of(words[2]),
                new TopicIds(subscribed, resolver), target));
        }
        SubscriptionType type = subscriptions.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        GroupAssignment assignment = assignor.assign(new GroupSpecImpl(specs, type, inverted),
            new SubscribedTopicDescriberImpl(image));
        List<String> found = new ArrayList<>();
        for (String member : specs.keySet()) {
            MemberAssignment mine = assignment.members().get(member);
            List<String> entries = new ArrayList<>();
            if (mine != null) {
                for (Map.Entry<Uuid, Set<Integer>> topic : mine.partitions().entrySet()) {
                    List<String> partitions = new ArrayList<>();
                    for (int p : topic.getValue()) {
                        partitions.add(Integer.toString(p));
                    }
                    if (!partitions.isEmpty()) {
                        entries.add(topic.getKey() + ":" + String.join("+", partitions));
                    }
                }
            }
            found.add(member + "=" + String.join(",", entries));
        }
        return String.join("\t", found);
    }

    private static CoordinatorMetadataImage image(Map<String, Topic> topics) {
        Map<Uuid, Topic> byId = new HashMap<>();
        topics.values().forEach(t -> byId.put(t.id(), t));
        return new CoordinatorMetadataImage() {
            @Override
            public Set<Uuid> topicIds() {
                return byId.keySet();
            }

            @Override
            public Set<String> topicNames() {
                return topics.keySet();
            }

            @Override
            public Optional<TopicMetadata> topicMetadata(String topicName) {
                return Optional.ofNullable(topics.get(topicName)).map(Kip848Calls::metadata);
            }

            @Override
            public Optional<TopicMetadata> topicMetadata(Uuid topicId) {
                return Optional.ofNullable(byId.get(topicId)).map(Kip848Calls::metadata);
            }

            @Override
            public CoordinatorMetadataDelta emptyDelta() {
                return CoordinatorMetadataDelta.EMPTY;
            }

            @Override
            public long version() {
                return 1L;
            }

            @Override
            public boolean isEmpty() {
                return topics.isEmpty();
            }
        };
    }

    private static CoordinatorMetadataImage.TopicMetadata metadata(Topic topic) {
        return new CoordinatorMetadataImage.TopicMetadata() {
            @Override
            public String name() {
                return topic.name();
            }

            @Override
            public Uuid id() {
                return topic.id();
            }

            @Override
            public int partitionCount() {
                return topic.partitions();
            }

            @Override
            public List<String> partitionRacks(int partitionId) {
                return List.of();
            }
        };
    }
}
