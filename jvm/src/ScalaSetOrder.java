import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The order a Kafka broker lists the topics of a Metadata request by name, for the test of our
 * model of it (assignor/metadata_order.py): {@code KafkaApis.handleTopicMetadataRequest} takes
 * the request's names as {@code metadataRequest.topics.asScala.toSet} and answers in that set's
 * order. Reads lines {@code set NAME...} (the names in request order) and answers each with the
 * set's names in iteration order, tab-separated, on one line.
 */
public final class ScalaSetOrder {
    private ScalaSetOrder() { }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] words = line.split(" ");
            List<String> names = Arrays.asList(words).subList(1, words.length);
            Iterator<Object> set = CollectionConverters.asScala(names).toSet().iterator();
            StringBuilder row = new StringBuilder();
            while (set.hasNext()) {
                row.append(row.length() == 0 ? "" : "\t").append(set.next());
            }
            out.append(row).append('\n');
        }
        System.out.print(out);
    }
}
