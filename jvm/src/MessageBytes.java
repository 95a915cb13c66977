import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;

/**
 * The bytes Kafka's generated message classes write, for the tests of our wire tables
 * (assignor/wire/admin.py). Reads lines {@code NAME VERSION JSON}, NAME a message of
 * {@code org.apache.kafka.common.message} without its {@code Data} suffix
 * ({@code ConsumerGroupDescribeResponse}), JSON its fields as that message's generated
 * {@code *JsonConverter} reads them; answers each with the message's bytes at VERSION in hex
 * ({@code MessageUtil.toByteBufferAccessor}), one line each.
 */
public final class MessageBytes {
    private MessageBytes() { }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] parts = line.split(" ", 3);
            short version = Short.parseShort(parts[1]);
            Class<?> converter = Class.forName("org.apache.kafka.common.message." + parts[0] + "DataJsonConverter");
            Method read = converter.getMethod("read", JsonNode.class, short.class);
            ApiMessage message = (ApiMessage) read.invoke(null, json.readTree(parts[2]), version);
            ByteBuffer bytes = MessageUtil.toByteBufferAccessor(message, version).buffer();
            out.append(HexFormat.of().formatHex(MessageUtil.byteBufferToArray(bytes))).append('\n');
        }
        System.out.print(out);
    }
}
