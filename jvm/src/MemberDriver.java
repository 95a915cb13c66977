import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Java members of Kafka consumer groups for the tests and the rebalance bench: each member a
 * {@link KafkaConsumer} polling on a thread of its own, several in one JVM, driven by commands
 * on stdin and reporting on stdout, one JSON object per line (bench/java_members.py is the other
 * side).
 *
 * <p>Commands: {@code {"op": "start", "member": M, "topics": [...], "config": {...}}} (consumer
 * properties: group.id, group.protocol, partition.assignment.strategy or group.remote.assignor,
 * group.instance.id, ...; with {@code "regex": R} in place of the topics, a regex subscription the
 * broker resolves, KIP-848's {@link SubscriptionPattern}), {@code subscribe} (new topics), {@code commit} (commitSync),
 * {@code close} (KafkaConsumer.close: leaves the group, revoking through the listener), and
 * {@code quit}. A command for a member runs on that member's thread: a KafkaConsumer is not
 * thread-safe.
 *
 * <p>Events: {@code started}, {@code assigned} / {@code revoked} / {@code lost} (from the
 * rebalance listener, with the partitions, the generation or member epoch and the member id of
 * {@code groupMetadata()}), {@code records} (topic, partition, offset of each record a poll
 * returned), {@code committed}, {@code closed}, {@code error}. Each carries {@code at}:
 * {@code System.nanoTime()} in seconds, which on Linux reads CLOCK_MONOTONIC as Python's
 * {@code time.monotonic()} does, so events of Java and Python members line up on one clock.
 */
public final class MemberDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    private static final Map<String, Member> MEMBERS = new ConcurrentHashMap<>();

    private MemberDriver() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode command = JSON.readTree(line);
            String op = command.path("op").asText();
            String name = command.path("member").asText();
            try {
                switch (op) {
                    case "start" -> start(name, command);
                    case "subscribe" -> member(name).submit(c -> c.subscribe(topics(command), member(name)));
                    case "commit" -> member(name).submit(c -> {
                        c.commitSync();
                        emit(name, "committed");
                    });
                    case "close" -> member(name).closing = true;
                    case "quit" -> {
                        quit();
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown op " + op);
                }
            } catch (RuntimeException e) {
                error(name, e);
            }
        }
        quit();  // stdin closed: the other side is gone
    }

    private static void quit() throws InterruptedException {
        for (Member member : MEMBERS.values()) {
            member.closing = true;
        }
        for (Member member : MEMBERS.values()) {
            member.thread.join(60_000);
        }
        OUT.flush();
    }

    private static Member member(String name) {
        Member member = MEMBERS.get(name);
        if (member == null) {
            throw new IllegalArgumentException("no member " + name);
        }
        return member;
    }

    private static List<String> topics(JsonNode command) {
        List<String> topics = new ArrayList<>();
        command.path("topics").forEach(topic -> topics.add(topic.asText()));
        return topics;
    }

    private static void start(String name, JsonNode command) {
        if (MEMBERS.containsKey(name)) {
            throw new IllegalArgumentException("member " + name + " exists");
        }
        Properties config = new Properties();
        command.path("config").fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        config.put("key.deserializer", ByteArrayDeserializer.class.getName());
        config.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Member member = new Member(name, config, topics(command), command.path("regex").asText(null));
        MEMBERS.put(name, member);
        member.thread.start();
    }

    static synchronized void emit(String name, String event, Consumer<ObjectNode> fill) {
        ObjectNode node = JSON.createObjectNode();
        node.put("at", System.nanoTime() / 1e9);
        node.put("member", name);
        node.put("event", event);
        fill.accept(node);
        OUT.println(node.toString());
        OUT.flush();
    }

    static void emit(String name, String event) {
        emit(name, event, node -> { });
    }

    static void error(String name, Throwable e) {
        emit(name, "error", node -> node.put("message", e.getClass().getName() + ": " + e.getMessage()));
    }

    /** One consumer and its polling thread; its own rebalance listener. */
    private static final class Member implements ConsumerRebalanceListener {
        final String name;
        final Thread thread;
        final ConcurrentLinkedQueue<Consumer<KafkaConsumer<byte[], byte[]>>> commands = new ConcurrentLinkedQueue<>();
        volatile boolean closing;
        private KafkaConsumer<byte[], byte[]> consumer;

        Member(String name, Properties config, List<String> topics, String regex) {
            this.name = name;
            this.thread = new Thread(() -> run(config, topics, regex), "member-" + name);
        }

        void submit(Consumer<KafkaConsumer<byte[], byte[]>> command) {
            commands.add(command);
        }

        private void run(Properties config, List<String> topics, String regex) {
            try {
                consumer = new KafkaConsumer<>(config);
                if (regex == null) {
                    consumer.subscribe(topics, this);
                } else {
                    consumer.subscribe(new SubscriptionPattern(regex), this);
                }
                emit(name, "started");
                while (!closing) {
                    Consumer<KafkaConsumer<byte[], byte[]>> command;
                    while ((command = commands.poll()) != null) {
                        try {
                            command.accept(consumer);
                        } catch (RuntimeException e) {
                            error(name, e);
                        }
                    }
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(50));
                    if (!records.isEmpty()) {
                        emit(name, "records", node -> {
                            ArrayNode rows = node.putArray("records");
                            for (ConsumerRecord<byte[], byte[]> record : records) {
                                rows.addArray().add(record.topic()).add(record.partition()).add(record.offset());
                            }
                        });
                    }
                }
                consumer.close();  // commits (auto-commit on), revokes through the listener, leaves
                emit(name, "closed");
            } catch (RuntimeException e) {
                error(name, e);
                if (consumer != null) {
                    consumer.close(Duration.ZERO);
                }
                emit(name, "closed");
            } finally {
                MEMBERS.remove(name);
            }
        }

        private void callback(String event, Collection<TopicPartition> partitions) {
            var metadata = consumer.groupMetadata();
            emit(name, event, node -> {
                node.put("generation", metadata.generationId());
                node.put("member_id", metadata.memberId());
                ArrayNode rows = node.putArray("partitions");
                for (TopicPartition tp : partitions) {
                    rows.addArray().add(tp.topic()).add(tp.partition());
                }
            });
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            callback("assigned", partitions);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            callback("revoked", partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            callback("lost", partitions);
        }
    }
}
