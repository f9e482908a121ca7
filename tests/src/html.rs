//! Just enough HTML reading for the tests of the generated pages: the
//! pages are seams's own output, one tag per line, attributes in double
//! quotes.

/// The values of `attribute="..."` in `html`, in order.
pub fn attribute_values(html: &str, attribute: &str) -> Vec<String> {
    let needle = format!(" {attribute}=\"");
    html.match_indices(&needle)
        .filter_map(|(at, _)| {
            let rest = &html[at + needle.len()..];
            Some(rest[..rest.find('"')?].to_owned())
        })
        .collect()
}

/// The value of `attribute` in one tag.
pub fn attribute(tag: &str, attribute: &str) -> Option<String> {
    attribute_values(tag, attribute).into_iter().next()
}

/// Each `<name ...>` opening tag in `html`, with the text up to its
/// closing tag when it has one (`</name>`).
pub fn elements<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    let close = format!("</{name}>");
    html.match_indices(&open)
        .map(|(at, _)| {
            let rest = &html[at..];
            let tag_end = rest.find('>').map_or(rest.len(), |e| e + 1);
            match rest.find(&close) {
                Some(end) if !rest[..tag_end].ends_with("/>") => &rest[..end + close.len()],
                _ => &rest[..tag_end],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_elements_are_found_in_order() {
        let html = r#"<form hx-post="/f"><input name="a" type="date"><select name="s"><option value="x">X</option></select></form>"#;
        assert_eq!(attribute_values(html, "name"), ["a", "s"]);
        let form = elements(html, "form");
        assert_eq!(form.len(), 1);
        assert_eq!(attribute(form[0], "hx-post").as_deref(), Some("/f"));
        let select = elements(form[0], "select")[0];
        assert_eq!(attribute_values(select, "value"), ["x"]);
        assert_eq!(
            elements(form[0], "input"),
            [r#"<input name="a" type="date">"#]
        );
    }
}
